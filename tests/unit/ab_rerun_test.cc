// The A/B of an accuracy failure against scripted executors: the case runs
// again on a fresh compiler cache and on the original one, and the three
// outputs, compared bit for bit, classify the failure.
#include "runner/verify/ab_rerun.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <functional>
#include <optional>

#include "tests/support/fake_executor.h"
#include "tests/support/scratch_dir_test.h"

namespace opverify {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::FakeExecutor;
using testing::FakeExecutorScript;
using testing::FakeReply;
using testing::Outputs;
namespace proto = executor_protocol;

class AbRerun : public testing::ScratchDirTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(ScratchDirTest::SetUp());
    spec_.name = "softmax";
    spec_.task_file = "/ops/softmax_torch.py";
    spec_.impl_file = "/ops/softmax_impl.py";
    spec_.config.seeds = 1;
    spec_.config.lint = false;
    proto::LoadReply load;
    load.case_count = 2;
    script_.On("load", [load](const json&, const FakeExecutor&) { return FakeReply::Ok(json(load)); });
  }
  // The case's actual output in `executor`, for case 1 (case 0 always matches).
  void OutputIs(std::function<std::vector<double>(const FakeExecutor&)> actual) {
    script_.On("run_case", [actual](const json& request, const FakeExecutor& executor) {
      return FakeReply::Ok({{"input_dtypes", {"float32"}}},
                           Outputs({1, 2, 3}, request.at("index") == 0 ? std::vector<double>{1, 2, 3} : actual(executor)));
    });
  }

  // Runs the operator, then the A/B of its failing case 1.
  json RunAndAb() {
    RunOptions options;
    options.start_executor = script_.Factory();
    options.env = {{"TRITON_CACHE_DIR", dir_ + "/cache"}};
    std::optional<CaseOutcome> failed;
    RunOperator(spec_, options, [&](const CaseOutcome& c) {
      if (!c.passed) failed = c;
    });
    EXPECT_TRUE(failed.has_value());
    if (!failed) return json();
    EXPECT_EQ(failed->error_type, "AccuracyError");
    AbRequest request;
    request.spec = &spec_;
    request.options = options;
    request.original_cache_dir = dir_ + "/cache";
    request.fresh_cache_parent = dir_ + "/ab";
    request.original_environment = {{"triton", "3.0"}};
    return RunAb(request, *failed);
  }

  static bool OnFreshCache(const FakeExecutor& executor) {
    return executor.Env("TRITON_CACHE_DIR").find("/ab/fresh_") != std::string::npos;
  }

  OperatorSpec spec_;
  FakeExecutorScript script_;
};

TEST_F(AbRerun, TheSameWrongOutputEverywhereIsARealDefect) {
  OutputIs([](const FakeExecutor&) { return std::vector<double>{1, 2, 30}; });
  const json record = RunAndAb();
  EXPECT_EQ(record.at("classification"), "real_defect");
  EXPECT_EQ(record.at("bitwise_equal"), json({{"fresh", true}, {"same_cache", true}}));
  EXPECT_TRUE(record.at("kept_cache_dir").is_null());
  EXPECT_TRUE(fs::is_empty(dir_ + "/ab"));  // the fresh cache is not kept
  // Each rerun is a new executor running only the failing case.
  EXPECT_EQ(script_.started(), 3);
  std::vector<int> rerun;
  for (const auto& sent : script_.RequestsOf("run_case")) {
    if (sent.executor > 1) rerun.push_back(sent.request.at("index").get<int>());
  }
  EXPECT_EQ(rerun, (std::vector<int>{1, 1}));
}

TEST_F(AbRerun, AnOutputThatChangesOnlyWithAFreshCacheIsACompilerSuspect) {
  OutputIs([](const FakeExecutor& executor) {
    return OnFreshCache(executor) ? std::vector<double>{1, 2, 3} : std::vector<double>{1, 2, 30};
  });
  const json record = RunAndAb();
  EXPECT_EQ(record.at("classification"), "compiler_suspect");
  EXPECT_EQ(record.at("bitwise_equal"), json({{"fresh", false}, {"same_cache", true}}));
  ASSERT_TRUE(record.at("kept_cache_dir").is_string());
  EXPECT_TRUE(fs::is_directory(record.at("kept_cache_dir").get<std::string>()));
  EXPECT_EQ(record.at("environments").at("original"), json({{"triton", "3.0"}}));
  EXPECT_EQ(record.at("attempts").at(1).at("label"), "fresh_cache");
  EXPECT_TRUE(record.at("attempts").at(1).at("passed").get<bool>());
}

TEST_F(AbRerun, AnOutputThatChangesOnTheSameCacheIsNondeterministic) {
  OutputIs([](const FakeExecutor& executor) { return std::vector<double>{1, 2, 30.0 + executor.id()}; });
  const json record = RunAndAb();
  EXPECT_EQ(record.at("classification"), "nondeterministic");
  EXPECT_FALSE(record.at("bitwise_equal").at("same_cache").get<bool>());
}

TEST_F(AbRerun, ACrashOnRerunIsNotAgreement) {
  OutputIs([](const FakeExecutor&) { return std::vector<double>{1, 2, 30}; });
  script_.On("run_case", [](const json& request, const FakeExecutor& executor) {
    if (executor.id() > 1) return FakeReply::Died(SIGSEGV);
    return FakeReply::Ok({{"input_dtypes", {"float32"}}},
                         Outputs({1, 2, 3}, request.at("index") == 0 ? std::vector<double>{1, 2, 3}
                                                                     : std::vector<double>{1, 2, 30}));
  });
  const json record = RunAndAb();
  EXPECT_EQ(record.at("classification"), "nondeterministic");
  EXPECT_EQ(record.at("attempts").at(2).at("error_type"), "Crash");
}

}  // namespace
}  // namespace opverify
