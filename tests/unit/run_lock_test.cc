// One writer per run folder: the rule that decides whether a lock file's
// record may be broken (a pure function), and the real lock on real files.
#include "runner/store/run_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace opverify {
namespace {

LockHolder Holder(const std::string& host, long pid, const std::string& start = "100",
                  const std::string& boot = "boot-a") {
  LockHolder h;
  h.host = host;
  h.pid = pid;
  h.pid_start = start;
  h.boot_id = boot;
  h.program = "opverify-batch";
  h.since = "2026-12-01T10:00:00.000000Z";
  return h;
}

const auto kNoSuchProcess = [](long) { return std::optional<std::string>(); };
const auto kStartedAt100 = [](long) { return std::optional<std::string>("100"); };

TEST(DecideLock, AFlockSomeoneElseHoldsIsAlwaysRefused) {
  EXPECT_EQ(DecideLock(false, std::nullopt, Holder("h", 1), kNoSuchProcess), LockDecision::kRefuse);
  EXPECT_EQ(DecideLock(false, Holder("h", 2), Holder("h", 1), kNoSuchProcess),
            LockDecision::kRefuse);
}

TEST(DecideLock, AnEmptyFileIsFree) {
  EXPECT_EQ(DecideLock(true, std::nullopt, Holder("h", 1), kStartedAt100), LockDecision::kTake);
}

TEST(DecideLock, ARecordFromAnotherHostIsNeverBroken) {
  // Over NFS its flock() is invisible here, and its pid cannot be checked.
  EXPECT_EQ(DecideLock(true, Holder("other", 2), Holder("h", 1), kNoSuchProcess),
            LockDecision::kRefuse);
}

TEST(DecideLock, ARecordOfThisHostIsStaleWhenItsProcessIsGoneOrAnother) {
  EXPECT_EQ(DecideLock(true, Holder("h", 2), Holder("h", 1), kNoSuchProcess),
            LockDecision::kBreakStale);
  // The pid lives, but started at another time: reused by another process.
  EXPECT_EQ(DecideLock(true, Holder("h", 2, "99"), Holder("h", 1), kStartedAt100),
            LockDecision::kBreakStale);
  // The machine rebooted since the record was written.
  EXPECT_EQ(DecideLock(true, Holder("h", 2, "100", "boot-old"), Holder("h", 1), kStartedAt100),
            LockDecision::kBreakStale);
  // The very process that wrote it, alive: not ours to break.
  EXPECT_EQ(DecideLock(true, Holder("h", 2), Holder("h", 1), kStartedAt100), LockDecision::kRefuse);
}

TEST(LockHolder, SurvivesItsTextAndRefusesWhatIsNotOne) {
  const LockHolder h = Holder("node-7", 4242);
  const std::optional<LockHolder> back = ParseLockHolder(LockHolderText(h));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->host, "node-7");
  EXPECT_EQ(back->pid, 4242);
  EXPECT_EQ(back->pid_start, "100");
  EXPECT_EQ(DescribeHolder(*back),
            "pid 4242 on host node-7 (opverify-batch, since 2026-12-01T10:00:00.000000Z)");
  EXPECT_FALSE(ParseLockHolder(""));
  EXPECT_FALSE(ParseLockHolder("{\"host\": 1}"));
  EXPECT_FALSE(ParseLockHolder("garbage"));
}

fs::path Fresh(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("opverify-run-lock-test-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string Text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RunLock, ASecondHolderIsRefusedNamingTheFirstUntilItReleases) {
  const fs::path dir = Fresh("second");
  Result<RunLock> first = RunLock::Acquire(dir.string(), "opverify-batch");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const std::optional<LockHolder> recorded = ParseLockHolder(Text(dir / kRunLockFile));
  ASSERT_TRUE(recorded);
  EXPECT_EQ(recorded->pid, static_cast<long>(getpid()));
  Result<RunLock> second = RunLock::Acquire(dir.string(), "opverify-reduce");
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("in use by pid " + std::to_string(getpid())),
            std::string::npos)
      << second.status().message();
  first = RunLock();  // released: emptied, unlocked
  EXPECT_EQ(Text(dir / kRunLockFile), "");
  EXPECT_TRUE(RunLock::Acquire(dir.string(), "opverify-reduce").ok());
  fs::remove_all(dir);
}

TEST(RunLock, AKilledHoldersRecordOnThisHostIsBroken) {
  const fs::path dir = Fresh("stale");
  LockHolder dead = ThisProcess("opverify-batch");
  dead.pid = 999999999;  // above any pid_max: no such process
  std::ofstream(dir / kRunLockFile) << LockHolderText(dead);
  std::string broke;
  Result<RunLock> taken = RunLock::Acquire(dir.string(), "opverify-batch", &broke);
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_NE(broke.find("pid 999999999"), std::string::npos) << broke;
  fs::remove_all(dir);
}

TEST(RunLock, ARecordFromAnotherHostIsRefusedWithWhatToRemove) {
  const fs::path dir = Fresh("remote");
  std::ofstream(dir / kRunLockFile) << LockHolderText(Holder("some-other-node", 77));
  Result<RunLock> taken = RunLock::Acquire(dir.string(), "opverify-batch");
  ASSERT_FALSE(taken.ok());
  EXPECT_NE(taken.status().message().find("pid 77 on host some-other-node"), std::string::npos);
  EXPECT_NE(taken.status().message().find("remove " + (dir / kRunLockFile).string()),
            std::string::npos)
      << taken.status().message();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace opverify
