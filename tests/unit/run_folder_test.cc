// The run folder's name, agreed by every rank over in-process Comms: rank 0
// decides (and may refuse a folder that holds a run or that another run
// holds the lock of), the others follow.
#include "runner/batch/run_folder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace opverify {
namespace {

struct Agreed {
  std::vector<bool> go_on;
  std::vector<std::string> run_dirs;
};

// Every rank of an n-rank world negotiates; rank 0 starts from `rank0`. Rank
// r read the job `jobs[r]` (all the same job when `jobs` is empty).
Agreed Negotiate(int n, const BatchOptions& rank0, const std::string& job_name,
                 const std::vector<std::string>& jobs = {}) {
  std::vector<std::unique_ptr<Comm>> world = MakeLocalComms(n);
  Agreed agreed;
  agreed.go_on.resize(static_cast<std::size_t>(n));
  agreed.run_dirs.resize(static_cast<std::size_t>(n));
  std::vector<std::thread> ranks;
  RunLock lock;  // rank 0's, released when the negotiation is over
  for (int r = 0; r < n; ++r) {
    ranks.emplace_back([&, r] {
      BatchOptions options = r == 0 ? rank0 : BatchOptions{};
      agreed.go_on[static_cast<std::size_t>(r)] = NegotiateRunDir(
          world[static_cast<std::size_t>(r)].get(), job_name,
          jobs.empty() ? "job" : jobs[static_cast<std::size_t>(r)], &options, &lock);
      agreed.run_dirs[static_cast<std::size_t>(r)] = options.run_dir;
    });
  }
  for (auto& t : ranks) t.join();
  return agreed;
}

fs::path FreshFolder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("opverify-run-folder-test-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(NegotiateRunDir, ARankThatReadADifferentJobRefusesTheRunOnEveryRank) {
  BatchOptions options;
  options.run_dir = "runs/differs";
  options.dry_run = true;
  ::testing::internal::CaptureStderr();
  const Agreed agreed = Negotiate(3, options, "job", {"job-a", "job-a", "job-b"});
  const std::string said = ::testing::internal::GetCapturedStderr();
  for (int r = 0; r < 3; ++r) EXPECT_FALSE(agreed.go_on[static_cast<std::size_t>(r)]) << r;
  EXPECT_NE(said.find("rank 2: it read a different job than rank 0"), std::string::npos) << said;
  EXPECT_EQ(said.find("rank 1:"), std::string::npos) << said;
}

TEST(NegotiateRunDir, EveryRankTakesRankZerosFolderMadeAbsolute) {
  BatchOptions options;
  options.run_dir = "runs/relative";  // only named here: a dry run creates nothing
  options.dry_run = true;
  const Agreed agreed = Negotiate(3, options, "job");
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(agreed.go_on[static_cast<std::size_t>(r)]) << r;
    EXPECT_EQ(agreed.run_dirs[static_cast<std::size_t>(r)], fs::absolute(options.run_dir).string())
        << r;
  }
  EXPECT_TRUE(fs::path(agreed.run_dirs[0]).is_absolute());
}

TEST(NegotiateRunDir, WithoutARunDirEveryRankTakesTheDefaultNamedAfterTheJob) {
  BatchOptions dry;
  dry.dry_run = true;
  const Agreed agreed = Negotiate(2, dry, "nightly");
  EXPECT_TRUE(agreed.go_on[0] && agreed.go_on[1]);
  EXPECT_EQ(agreed.run_dirs[0], agreed.run_dirs[1]);
  EXPECT_EQ(fs::path(agreed.run_dirs[0]).parent_path(), fs::absolute("runs"));
  EXPECT_EQ(fs::path(agreed.run_dirs[0]).filename().string().rfind("nightly-", 0), 0u)
      << agreed.run_dirs[0];
  // A job without a name is "job".
  EXPECT_EQ(fs::path(Negotiate(1, dry, "").run_dirs[0]).filename().string().rfind("job-", 0), 0u);
}

TEST(NegotiateRunDir, AFolderHoldingARunIsRefusedOnEveryRankUnlessResumedOrDry) {
  const fs::path dir = FreshFolder("refused");
  fs::create_directories(dir / "shards");
  BatchOptions options;
  options.run_dir = dir.string();
  const Agreed refused = Negotiate(3, options, "job");
  for (int r = 0; r < 3; ++r) EXPECT_FALSE(refused.go_on[static_cast<std::size_t>(r)]) << r;

  options.resume = true;
  const Agreed resumed = Negotiate(3, options, "job");
  for (int r = 0; r < 3; ++r) EXPECT_TRUE(resumed.go_on[static_cast<std::size_t>(r)]) << r;
  options.resume = false;
  options.dry_run = true;
  EXPECT_TRUE(Negotiate(2, options, "job").go_on[1]);
  fs::remove_all(dir);
}

TEST(NegotiateRunDir, ALoneRankNeedsNoComm) {
  const fs::path dir = FreshFolder("alone");
  BatchOptions options;
  options.run_dir = dir.string();
  RunLock lock;
  EXPECT_TRUE(NegotiateRunDir(nullptr, "job", "job", &options, &lock));
  EXPECT_TRUE(lock.held());
  EXPECT_EQ(options.run_dir, dir.string());
  lock = RunLock();
  fs::create_directories(dir / "shards");
  EXPECT_FALSE(NegotiateRunDir(nullptr, "job", "job", &options, &lock));
  EXPECT_FALSE(lock.held());
  fs::remove_all(dir);
}

// runs/ with an earlier run `old` (it has shards/) and runs/latest a link to it.
fs::path RunsWithLatestAtOld(const std::string& name) {
  const fs::path runs = FreshFolder(name) / "runs";
  fs::create_directories(runs / "old" / "shards");
  fs::create_directory_symlink("old", runs / "latest");
  return runs;
}

TEST(NegotiateRunDir, RunsLatestMovesOnlyOnceEveryRankHasComeToAgree) {
  // A late rank reads --rerun-failed runs/latest before it negotiates: it must find the old run
  // there, or it selects other cases (none) than rank 0 and the ranks wait on each other forever.
  const fs::path runs = RunsWithLatestAtOld("latest-late-rank");
  std::vector<std::unique_ptr<Comm>> world = MakeLocalComms(2);
  RunLock lock;
  BatchOptions first;
  first.run_dir = (runs / "new").string();
  std::thread rank0(
      [&] { EXPECT_TRUE(NegotiateRunDir(world[0].get(), "job", "job", &first, &lock)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const fs::path seen_by_rank1 = fs::read_symlink(runs / "latest");
  BatchOptions other;
  EXPECT_TRUE(NegotiateRunDir(world[1].get(), "job", "job", &other, &lock));
  rank0.join();
  EXPECT_EQ(seen_by_rank1, fs::path("old"));
  EXPECT_EQ(fs::read_symlink(runs / "latest"), fs::path("new"));
  EXPECT_EQ(other.run_dir, (runs / "new").string());
  lock = RunLock();
  fs::remove_all(runs.parent_path());
}

TEST(NegotiateRunDir, RunsLatestNamesTheFolderItPointsAtForResumeAndPrevious) {
  const fs::path runs = RunsWithLatestAtOld("latest-resume");
  BatchOptions options;
  options.run_dir = (runs / "latest").string();
  options.resume = true;
  options.previous_run = (runs / "latest").string();
  const Agreed resumed = Negotiate(2, options, "job");
  EXPECT_TRUE(resumed.go_on[0] && resumed.go_on[1]);
  EXPECT_EQ(resumed.run_dirs[0], (runs / "old").string());
  EXPECT_EQ(resumed.run_dirs[1], (runs / "old").string());
  EXPECT_EQ(fs::read_symlink(runs / "latest"), fs::path("old"));  // not a link to itself
  RunLock lock;
  ASSERT_TRUE(NegotiateRunDir(nullptr, "job", "job", &options, &lock));
  EXPECT_EQ(options.previous_run, (runs / "old").string());  // read once runs/latest has moved on
  lock = RunLock();
  fs::remove_all(runs.parent_path());
}

TEST(DefaultRunDir, AJobNameNeverLeavesRunsWhateverItHolds) {
  for (const std::string& name :
       {std::string("../../../../X"), std::string("a\0b", 3), std::string(300, 'n'),
        std::string("a/b/c"), std::string(".hidden"), std::string("-rf"), std::string(".."),
        std::string("/etc/passwd"), std::string("x'; touch INJECTED; echo '"), std::string()}) {
    const fs::path dir = DefaultRunDir(name);
    EXPECT_EQ(dir.parent_path(), fs::path("runs")) << name;
    const std::string leaf = dir.filename().string();
    EXPECT_LE(leaf.size(), 64u + 17u) << name;  // the name, '-' and the UTC stamp
    EXPECT_TRUE(leaf.front() != '.' && leaf.front() != '-') << leaf;
    EXPECT_EQ(
        leaf.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."),
        std::string::npos)
        << leaf;
    EXPECT_EQ(leaf.find(".."), std::string::npos) << leaf;
  }
  EXPECT_EQ(fs::path(DefaultRunDir("../../../../X")).filename().string().rfind("X-", 0), 0u);
  EXPECT_EQ(fs::path(DefaultRunDir("nightly.v2")).filename().string().rfind("nightly.v2-", 0), 0u);
}

TEST(NegotiateRunDir, AFolderAnotherRunHoldsIsRefusedEvenForResume) {
  const fs::path dir = FreshFolder("held");
  Result<RunLock> other = RunLock::Acquire(dir.string(), "opverify-batch");
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  BatchOptions options;
  options.run_dir = dir.string();
  options.resume = true;
  const Agreed refused = Negotiate(2, options, "job");
  EXPECT_FALSE(refused.go_on[0] || refused.go_on[1]);
  other = RunLock();  // that run ends
  const Agreed taken = Negotiate(2, options, "job");
  EXPECT_TRUE(taken.go_on[0] && taken.go_on[1]);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace opverify
