// A rank's worker against a scripted executor and a real shard: what it
// stores and reports for each case, what a stop signal leaves for --resume,
// the A/B of an accuracy failure, the benchmark of a passing operator, and
// the warm executor kept between items unless an operator tainted it.
#include "runner/batch/worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <filesystem>

#include "runner/store/run_records.h"
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

FakeReply Matches() { return FakeReply::Ok({{"input_dtypes", {"float32"}}}, Outputs({1, 2, 3}, {1, 2, 3})); }

class Worker : public testing::ScratchDirTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(ScratchDirTest::SetUp());
    Result<std::unique_ptr<ShardWriter>> shard =
        ShardWriter::Create(dir_, 0, StorePolicy::kFailures, Durability::kProcessCrash);
    ASSERT_TRUE(shard.ok()) << shard.status().ToString();
    shard_ = std::move(shard).value();

    OperatorJob op;
    op.name = "relu";
    op.code.task_file = "/ops/relu_torch.py";
    op.code.impl_file = "/ops/relu_impl.py";
    op.config.seeds = 1;
    op.bench.enabled = false;
    job_.name = "worker_test";
    job_.operators = {op};
    options_.backend = "cpu";
    options_.ab = false;
    options_.freq_check_interval_s = 0;

    setup_.job = &job_;
    setup_.options = &options_;
    setup_.cache_dir = dir_ + "/cache";
    setup_.shard = shard_.get();
    // Made again now that script_ exists: RunOptions read the fake's default
    // (the shared golden, fake_executor.h) when made, and setup_ is older.
    setup_.run = RunOptions();
    setup_.run.backend = options_.backend;  // as opverify-batch's MakeWorkerSetup
    setup_.run.executor.stop = &stop_;
    setup_.run.start_executor = script_.Factory();

    script_.On("load", [](const json&, const FakeExecutor&) {
      proto::LoadReply load;
      load.case_count = 3;
      return FakeReply::Ok(json(load));
    });
    script_.On("lint", [](const json&, const FakeExecutor&) { return FakeReply::Ok({{"lint", {{"valid", true}}}}); });
    script_.On("environment", [](const json&, const FakeExecutor&) { return FakeReply::Ok({{"environment", {}}}); });
    script_.On("run_case", [](const json&, const FakeExecutor&) { return Matches(); });
  }
  void TearDown() override {
    shard_.reset();
    ScratchDirTest::TearDown();
  }

  // Runs item 0 (every case of the operator); the case reports, in order.
  std::vector<json> Run(bool* stored = nullptr) {
    std::vector<json> cases;
    const bool ok = RunWorkItem(WorkItem{}, setup_, [&](const json& report) {
      if (report.contains("case_id")) cases.push_back(report);
    });
    if (stored != nullptr) *stored = ok;
    return cases;
  }

  std::set<std::string> Journaled() const {
    Result<std::set<std::string>> ids = JournaledCases(dir_);
    EXPECT_TRUE(ids.ok());
    return ids.ok() ? ids.value() : std::set<std::string>();
  }

  std::unique_ptr<ShardWriter> shard_;
  JobManifest job_;
  BatchOptions options_;
  std::atomic<int> stop_{0};
  WorkerSetup setup_;
  FakeExecutorScript script_;
};

TEST_F(Worker, StoresAndReportsEveryCase) {
  bool stored = false;
  const std::vector<json> cases = Run(&stored);
  EXPECT_TRUE(stored);
  ASSERT_EQ(cases.size(), 3U);
  EXPECT_EQ(cases[2].at("case_id"), "relu/#3");
  EXPECT_TRUE(cases[2].at("passed").get<bool>());
  const std::set<std::string> journaled = Journaled();
  for (const char* id : {"relu/#1", "relu/#2", "relu/#3", "relu/@operator/0"})
    EXPECT_EQ(journaled.count(id), 1U) << id;
}

TEST_F(Worker, CasesDoneInAnEarlierRunAreNotRunAgain) {
  setup_.done = {{"relu/#1", true}, {"relu/#3", false}};
  const std::vector<json> cases = Run();
  ASSERT_EQ(cases.size(), 1U);
  EXPECT_EQ(cases[0].at("case_id"), "relu/#2");
  EXPECT_EQ(script_.RequestsOf("run_case").size(), 1U);
}

TEST_F(Worker, ACrashIsStoredAsTheCasesVerdict) {
  script_.On("run_case", [](const json& request, const FakeExecutor&) {
    return request.at("index") == 1 ? FakeReply::Died(SIGSEGV) : Matches();
  });
  const std::vector<json> cases = Run();
  ASSERT_EQ(cases.size(), 3U);
  EXPECT_EQ(cases[1].at("error_type"), "Crash");
  EXPECT_EQ(Journaled().count("relu/#2"), 1U);
  EXPECT_EQ(script_.started(), 2);
}

TEST_F(Worker, AStopSignalLeavesTheRestForResume) {
  // Slurm signals the rank and its executor at once: the case in flight dies
  // of it, and neither it nor the cases after it are stored.
  script_.On("run_case", [this](const json& request, const FakeExecutor&) {
    if (request.at("index") == 0) return Matches();
    stop_.store(SIGTERM);
    return FakeReply::Died(SIGTERM);
  });
  const std::vector<json> cases = Run();
  ASSERT_EQ(cases.size(), 1U);
  EXPECT_EQ(cases[0].at("case_id"), "relu/#1");
  const std::set<std::string> journaled = Journaled();
  EXPECT_EQ(journaled.count("relu/#2"), 0U);
  EXPECT_EQ(journaled.count("relu/#3"), 0U);
  EXPECT_EQ(script_.RequestsOf("run_case").size(), 2U);
}

TEST_F(Worker, AnAccuracyFailureIsReRunForItsAB) {
  options_.ab = true;
  script_.On("run_case", [](const json& request, const FakeExecutor&) {
    if (request.at("index") != 1) return Matches();
    return FakeReply::Ok({{"input_dtypes", {"float32"}}}, Outputs({1, 2, 3}, {1, 2, 30}));
  });
  const std::vector<json> cases = Run();
  ASSERT_EQ(cases.size(), 3U);
  EXPECT_EQ(cases[1].at("error_type"), "AccuracyError");
  EXPECT_EQ(cases[1].at("ab"), "real_defect");
  EXPECT_TRUE(cases[0].at("ab").is_null());
  // The operator's executor, then one per A/B run, then the float64-golden
  // rerun of reference trust (the fake's golden is not fp64: not judged).
  EXPECT_EQ(script_.started(), 4);
}

TEST_F(Worker, APassingOperatorIsBenchmarkedAndEachShapeStored) {
  options_.bench = true;
  job_.operators[0].bench.enabled = true;
  script_.On("bench_prepare", [](const json&, const FakeExecutor&) { return FakeReply::Ok(); });
  script_.On("bench_measure", [](const json&, const FakeExecutor&) {
    return FakeReply::Ok({{"stats", {{"median_ms", 1.0}}}});
  });
  script_.On("bench_release", [](const json&, const FakeExecutor&) { return FakeReply::Ok(); });
  std::vector<json> benches;
  RunWorkItem(WorkItem{}, setup_, [&](const json& report) {
    if (report.value("kind", "") == "bench") benches.push_back(report);
  });
  ASSERT_EQ(benches.size(), 1U);
  EXPECT_EQ(benches[0].at("shapes"), 3);
  const std::set<std::string> journaled = Journaled();
  for (const char* id : {"relu/#1@bench", "relu/#3@bench", "relu/@bench-item/0"}) {
    EXPECT_EQ(journaled.count(id), 1U) << id;
  }
}

TEST_F(Worker, TheWarmExecutorServesTheNextItemUnlessTainted) {
  ExecutorPool pool;
  setup_.run.pool = &pool;
  Run();
  Run();
  EXPECT_EQ(script_.started(), 1);
  script_.On("load", [](const json&, const FakeExecutor& executor) {
    if (executor.loads() > 0) return FakeReply::Error(std::string(proto::kExecutorTainted), "torch.relu replaced");
    proto::LoadReply load;
    load.case_count = 3;
    return FakeReply::Ok(json(load));
  });
  const std::vector<json> cases = Run();
  EXPECT_EQ(cases.size(), 3U);
  EXPECT_EQ(cases[0].at("passed"), true);
  EXPECT_EQ(script_.started(), 2);
}

}  // namespace
}  // namespace opverify
