// The seal of the runtime's code (runner/executor/runtime_seal.h), in a real
// embedded interpreter: each way an implementation could replace a piece of
// the runtime from Python is a change, and what the runtime and third-party
// modules legitimately do later (lazy imports) is none.
#include "runner/executor/runtime_seal.h"

#include <gtest/gtest.h>
#include <pybind11/embed.h>

#include <algorithm>

namespace py = pybind11;

namespace opverify {
namespace {

// A stand-in for an opverify_runtime module and a session object, fresh per test.
class RuntimeSealTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { interpreter_ = new py::scoped_interpreter(); }

  void SetUp() override {
    py::exec(R"(
import sys, types, time, json
sys.modules.pop("opverify_runtime.fake_later", None)
fake = types.ModuleType("opverify_runtime.fake")
exec('''
def run_case(x):
    return x

class Session:
    def op_run_case(self, request):
        return run_case(request)

    @staticmethod
    def helper():
        return 1
''', fake.__dict__)
sys.modules["opverify_runtime.fake"] = fake
session = fake.Session()
session.task = None
original_perf_counter = time.perf_counter
)",
             py::globals());
    session_ = py::globals()["session"];
    sealed_ = TakeRuntimeIdentities(session_.ptr());
  }

  void TearDown() override {
    py::exec("time.perf_counter = original_perf_counter\njson.__dict__.pop('forged_extra', None)",
             py::globals());
  }

  std::vector<std::string> Changes() {
    return SealChanges(sealed_, TakeRuntimeIdentities(session_.ptr()));
  }

  static bool Names(const std::vector<std::string>& changes, const std::string& name) {
    return std::find(changes.begin(), changes.end(), name) != changes.end();
  }

  static py::scoped_interpreter* interpreter_;
  py::object session_;
  RuntimeIdentities sealed_;
};

py::scoped_interpreter* RuntimeSealTest::interpreter_ = nullptr;

TEST_F(RuntimeSealTest, NothingChangedIsNoChange) {
  EXPECT_TRUE(Changes().empty());
  // Data on the session changes all the time, the modules it holds too (an implementation loaded).
  py::exec("session.task = object()\nsession.impl = types.ModuleType('impl')", py::globals());
  EXPECT_TRUE(Changes().empty());
}

TEST_F(RuntimeSealTest, AMethodReplacedOnTheClassIsNamed) {
  py::exec("fake.Session.op_run_case = lambda self, request: request", py::globals());
  EXPECT_TRUE(Names(Changes(), "opverify_runtime.fake.Session.op_run_case"));
}

TEST_F(RuntimeSealTest, AFunctionsCodeSwappedInPlaceIsNamed) {
  py::exec("fake.run_case.__code__ = (lambda x: 0).__code__", py::globals());
  EXPECT_TRUE(Names(Changes(), "opverify_runtime.fake.run_case#code"));
}

TEST_F(RuntimeSealTest, AStaticMethodsFunctionCodeIsSealedToo) {
  py::exec("fake.Session.__dict__['helper'].__func__.__code__ = (lambda: 2).__code__",
           py::globals());
  EXPECT_TRUE(Names(Changes(), "opverify_runtime.fake.Session.helper#code"));
}

TEST_F(RuntimeSealTest, AModuleFunctionReplacedIsNamed) {
  py::exec("fake.run_case = lambda x: 0", py::globals());
  EXPECT_TRUE(Names(Changes(), "opverify_runtime.fake.run_case"));
}

TEST_F(RuntimeSealTest, AGlobalThatShadowsABuiltinInTheRuntimeIsAChange) {
  py::exec("fake.len = lambda x: 0", py::globals());
  EXPECT_TRUE(Names(Changes(), "opverify_runtime.fake.len"));
}

TEST_F(RuntimeSealTest, AMethodShadowedOnTheSessionObjectIsAChange) {
  py::exec("session.op_run_case = lambda request: request", py::globals());
  EXPECT_TRUE(Names(Changes(), "session.op_run_case"));
}

TEST_F(RuntimeSealTest, TheStandardClockReplacedIsAChange) {
  py::exec("time.perf_counter = lambda: 0.0", py::globals());
  EXPECT_TRUE(Names(Changes(), "time.perf_counter"));
}

TEST_F(RuntimeSealTest, LazyImportsAreNoChange) {
  // A runtime module imported after the seal, bound on nothing sealed, and a
  // third party's new name (its lazily imported parts).
  py::exec(R"(
later = types.ModuleType("opverify_runtime.fake_later")
later.function = lambda: 0
sys.modules["opverify_runtime.fake_later"] = later
fake.fake_later = later
json.forged_extra = lambda: 0
)",
           py::globals());
  EXPECT_TRUE(Changes().empty()) << DescribeSealChanges(Changes());
}

TEST_F(RuntimeSealTest, AReplacedRuntimeModuleIsAChange) {
  py::exec("sys.modules['opverify_runtime.fake'] = types.ModuleType('opverify_runtime.fake')",
           py::globals());
  const std::vector<std::string> changes = Changes();
  EXPECT_TRUE(Names(changes, "opverify_runtime.fake#ns")) << DescribeSealChanges(changes);
  py::exec("sys.modules['opverify_runtime.fake'] = fake", py::globals());
}

TEST(DescribeSealChanges, ShowsTheFirstAndCountsTheRest) {
  EXPECT_EQ(DescribeSealChanges({"a", "b", "c"}, 2), "a, b and 1 more");
  EXPECT_EQ(DescribeSealChanges({"a"}), "a");
}

}  // namespace
}  // namespace opverify
