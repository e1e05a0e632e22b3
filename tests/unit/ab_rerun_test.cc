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
    spec_.code.task_file = "/ops/softmax_torch.py";
    spec_.code.impl_file = "/ops/softmax_impl.py";
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
    options.executor.env = {{"TRITON_CACHE_DIR", dir_ + "/cache"}};
    json record;
    // Inside the callback, as the batch worker does: the failing outputs are still at hand.
    RunOperator(spec_, options, [&](const CaseOutcome& c) {
      if (c.passed) return;
      EXPECT_EQ(c.error_type, "AccuracyError");
      AbRequest request;
      request.spec = &spec_;
      request.options = options;
      request.original_cache_dir = dir_ + "/cache";
      request.fresh_cache_parent = dir_ + "/ab";
      request.original_environment = environment_;
      record = RunAb(request, c);
    });
    EXPECT_TRUE(record.is_object());
    return record;
  }

  // The load request `executor` answered last.
  json LoadOf(const FakeExecutor& executor) const {
    json load;
    for (const auto& sent : script_.RequestsOf("load")) {
      if (sent.executor == executor.id()) load = sent.request;
    }
    return load;
  }
  // Case 1's outputs by the executor's kind: the original (and A/B) runs,
  // the float64-golden rerun, torch's device run of the reference. A
  // kind left empty answers as the original does; `fp64_error` makes the
  // reference fail on float64 inputs.
  struct Kinds {
    std::vector<double> golden, actual;
    std::vector<double> fp64_golden, fp64_actual;
    std::vector<double> device_output;
    std::string fp64_error;
  };
  void OutputsByKind(Kinds kinds) {
    script_.On("run_case", [this, kinds](const json& request, const FakeExecutor& executor) {
      const json load = LoadOf(executor);
      if (request.at("index") == 0)
        return FakeReply::Ok({{"input_dtypes", {"float32"}}}, Outputs({1, 2, 3}, {1, 2, 3}));
      if (load.value("golden_precision", "") == "fp64") {
        if (!kinds.fp64_error.empty()) return FakeReply::Error("RuntimeError", kinds.fp64_error);
        return FakeReply::Ok({{"input_dtypes", {"float32"}}, {"golden_precision", "fp64"}},
                             Outputs(kinds.fp64_golden,
                                     kinds.fp64_actual.empty() ? kinds.actual : kinds.fp64_actual));
      }
      if (load.value("reference_as_impl", false)) {
        return FakeReply::Ok({{"input_dtypes", {"float32"}}},
                             Outputs(kinds.golden, kinds.device_output));
      }
      return FakeReply::Ok({{"input_dtypes", {"float32"}}}, Outputs(kinds.golden, kinds.actual));
    });
  }
  // The loads of the trust reruns (after the original and the two A/B runs).
  std::vector<json> TrustLoads() const {
    std::vector<json> out;
    for (const auto& sent : script_.RequestsOf("load")) {
      if (sent.executor > 3) out.push_back(sent.request);
    }
    return out;
  }

  static bool OnFreshCache(const FakeExecutor& executor) {
    return executor.Env("TRITON_CACHE_DIR").find("/ab/fresh_") != std::string::npos;
  }

  OperatorSpec spec_;
  FakeExecutorScript script_;
  json environment_ = {{"triton", "3.0"}, {"device", {{"backend", "cpu"}}}};
};

TEST_F(AbRerun, TheSameWrongOutputEverywhereIsARealDefect) {
  OutputIs([](const FakeExecutor&) { return std::vector<double>{1, 2, 30}; });
  const json record = RunAndAb();
  EXPECT_EQ(record.at("classification"), "real_defect");
  EXPECT_EQ(record.at("bitwise_equal"), json({{"fresh", true}, {"same_cache", true}}));
  EXPECT_TRUE(record.at("kept_cache_dir").is_null());
  EXPECT_TRUE(fs::is_empty(dir_ + "/ab"));  // the fresh cache is not kept
  // Each rerun is a new executor running only the failing case; the fourth is
  // the float64-golden rerun (on cpu there is no device run of the reference).
  EXPECT_EQ(script_.started(), 4);
  EXPECT_FALSE(record.at("reference_trust").at("suspect").get<bool>());
  EXPECT_EQ(record.at("reference_trust").at("device_reference").at("ran"), false);
  std::vector<int> rerun;
  for (const auto& sent : script_.RequestsOf("run_case")) {
    if (sent.executor > 1) rerun.push_back(sent.request.at("index").get<int>());
  }
  EXPECT_EQ(rerun, (std::vector<int>{1, 1, 1}));
}

TEST_F(AbRerun, AFailureThatPassesAFloat64GoldenIsAReferenceSuspect) {
  // The CPU golden is off by 0.5 at element 2; the exact answer is what the implementation gave.
  OutputsByKind({{1, 2, 3}, {1, 2, 3.5}, {1, 2, 3.5}, {}, {}, ""});
  const json record = RunAndAb();
  EXPECT_EQ(record.at("classification"), "reference_suspect");
  const json& trust = record.at("reference_trust");
  EXPECT_TRUE(trust.at("suspect").get<bool>());
  EXPECT_NE(trust.at("reason").get<std::string>().find("passes against a float64 golden"),
            std::string::npos);
  EXPECT_TRUE(trust.at("fp64").at("passed").get<bool>());
  EXPECT_TRUE(trust.at("fp64").at("rerun_bitwise_equal").get<bool>());
  EXPECT_EQ(trust.at("fp64").at("outputs").size(), 1U);
  EXPECT_EQ(trust.at("device_reference").at("ran"), false);  // the cpu backend
  const std::vector<json> loads = TrustLoads();
  ASSERT_EQ(loads.size(), 1U);
  EXPECT_EQ(loads[0].at("golden_precision"), "fp64");
}

TEST_F(AbRerun, AnImplementationThatFailsTheFloat64GoldenTooIsARealDefect) {
  OutputsByKind({{1, 2, 3}, {1, 2, 3.5}, {1, 2, 3.01}, {}, {}, ""});
  const json record = RunAndAb();
  EXPECT_EQ(record.at("classification"), "real_defect");
  EXPECT_FALSE(record.at("reference_trust").at("suspect").get<bool>());
  EXPECT_EQ(record.at("reference_trust").at("fp64").at("error_type"), "AccuracyError");
}

TEST_F(AbRerun, TheFailingBytesAreJudgedNotAnotherRunsOutput) {
  // An implementation that behaves when the golden is float64 gains nothing:
  // it is the output that failed that is judged against the float64 golden.
  OutputsByKind({{1, 2, 3}, {1, 2, 30}, {1, 2, 3}, {1, 2, 3}, {}, ""});
  const json record = RunAndAb();
  EXPECT_EQ(record.at("classification"), "real_defect");
  EXPECT_FALSE(record.at("reference_trust").at("fp64").at("passed").get<bool>());
  EXPECT_FALSE(record.at("reference_trust").at("fp64").at("rerun_bitwise_equal").get<bool>());
}

TEST_F(AbRerun, TrustRerunsUseTheFailingSeedAlone) {
  spec_.config.seeds = 3;  // seeds 1, 2 then 0: the first fails
  OutputsByKind({{1, 2, 3}, {1, 2, 3.5}, {1, 2, 3.5}, {}, {}, ""});
  EXPECT_EQ(RunAndAb().at("classification"), "reference_suspect");
  std::vector<std::uint64_t> trust_seeds;
  for (const auto& sent : script_.RequestsOf("run_case")) {
    if (sent.executor > 3) trust_seeds.push_back(sent.request.at("seed").get<std::uint64_t>());
  }
  EXPECT_EQ(trust_seeds, (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(TrustLoads().at(0).at("seed"), 0);  // the load seed (get_init_inputs) is unchanged
}

TEST_F(AbRerun, OnADeviceTorchsOwnDeviceRunIsJudgedAgainstTheCpuGolden) {
  environment_ = {{"device", {{"backend", "cuda"}, {"name", "NVIDIA H200"}}}};
  OutputsByKind({{1, 2, 3}, {1, 2, 3.5}, {1, 2, 3.5}, {}, {1, 2, 3.5}, ""});
  const json record = RunAndAb();
  EXPECT_EQ(record.at("classification"), "reference_suspect");
  const json& device = record.at("reference_trust").at("device_reference");
  EXPECT_TRUE(device.at("ran").get<bool>());
  EXPECT_FALSE(device.at("passed").get<bool>());
  EXPECT_EQ(device.at("error_type"), "AccuracyError");
  EXPECT_TRUE(device.at("implementation_matches").at("passed").get<bool>());
  const std::vector<json> loads = TrustLoads();
  ASSERT_EQ(loads.size(), 2U);
  EXPECT_EQ(loads[1].value("reference_as_impl", false), true);
  EXPECT_EQ(loads[1].at("golden_precision"), "native");  // the CPU golden the case failed
  EXPECT_EQ(loads[0].count("reference_as_impl"), 0U);
}

TEST_F(AbRerun, WithoutAFloat64GoldenTheDeviceRunAloneCanMakeASuspect) {
  environment_ = {{"device", {{"backend", "cuda"}}}};
  OutputsByKind(
      {{1, 2, 3}, {1, 2, 3.5}, {}, {}, {1, 2, 3.5}, "golden_precision fp64: no float64 kernel"});
  const json record = RunAndAb();
  EXPECT_EQ(record.at("classification"), "reference_suspect");
  const json& trust = record.at("reference_trust");
  EXPECT_FALSE(trust.at("fp64").at("judged").get<bool>());
  EXPECT_NE(trust.at("reason").get<std::string>().find("no float64 golden could be made"),
            std::string::npos);
}

TEST_F(AbRerun, AnImplementationThatMatchesNeitherTheFloat64GoldenNorTorchsDeviceRunIsARealDefect) {
  environment_ = {{"device", {{"backend", "npu"}}}};
  // torch's device run fails the CPU golden too, but the implementation is elsewhere.
  OutputsByKind(
      {{1, 2, 3}, {1, 2, 5}, {}, {}, {1, 2, 3.5}, "golden_precision fp64: no float64 kernel"});
  const json record = RunAndAb();
  EXPECT_EQ(record.at("classification"), "real_defect");
  EXPECT_FALSE(record.at("reference_trust")
                   .at("device_reference")
                   .at("implementation_matches")
                   .at("passed")
                   .get<bool>());
}

TEST_F(AbRerun, FailingTheFloat64GoldenIsNotExcusedByTorchsDeviceRun) {
  environment_ = {{"device", {{"backend", "cuda"}}}};
  // The implementation copies torch's device kernel, which is off the exact answer as well.
  OutputsByKind({{1, 2, 3}, {1, 2, 3.5}, {1, 2, 3}, {}, {1, 2, 3.5}, ""});
  const json record = RunAndAb();
  EXPECT_EQ(record.at("classification"), "real_defect");
  const json& trust = record.at("reference_trust");
  EXPECT_TRUE(trust.at("device_reference").at("implementation_matches").at("passed").get<bool>());
  EXPECT_NE(trust.at("reason").get<std::string>().find("does not excuse"), std::string::npos);
}

TEST_F(AbRerun, AnOperatorJudgedAgainstAFloat64GoldenAlreadyNeedsNoRerun) {
  spec_.config.golden_precision = "fp64";
  OutputsByKind({{1, 2, 3}, {1, 2, 3.5}, {1, 2, 3}, {}, {}, ""});
  const json record = RunAndAb();
  EXPECT_EQ(record.at("classification"), "real_defect");
  EXPECT_EQ(script_.started(), 3);  // the original and the two A/B runs
  EXPECT_FALSE(record.at("reference_trust").at("fp64").at("passed").get<bool>());
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
  EXPECT_EQ(record.at("environments").at("original").at("triton"), "3.0");
  EXPECT_EQ(record.at("attempts").at(1).at("label"), "fresh_cache");
  EXPECT_TRUE(record.at("attempts").at(1).at("passed").get<bool>());
}

TEST_F(AbRerun, AnOutputThatChangesOnTheSameCacheIsNondeterministic) {
  OutputIs([](const FakeExecutor& executor) { return std::vector<double>{1, 2, 30.0 + executor.id()}; });
  const json record = RunAndAb();
  EXPECT_EQ(record.at("classification"), "nondeterministic");
  EXPECT_FALSE(record.at("bitwise_equal").at("same_cache").get<bool>());
  EXPECT_TRUE(record.at("reference_trust").is_null());  // examined only where the runs agree
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
  // ... and says how it ended, not only that it disagreed.
  EXPECT_NE(record.at("attempts").at(2).at("error_msg").get<std::string>().find("SIGSEGV"),
            std::string::npos)
      << record.at("attempts").at(2).dump();
}

}  // namespace
}  // namespace opverify
