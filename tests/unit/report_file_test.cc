// Reports are written whole or not at all: a full disk (a 64 KiB tmpfs, or a
// file-size limit where no tmpfs can be mounted) fails the write with the
// file and the reason, leaves no <report>.tmp behind and keeps the report
// that was there.
#include "reduce/report_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/scratch_dir_test.h"

namespace opverify {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class ReportFileTest : public testing::ScratchDirTest {
 protected:
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // A failed write: named, with its reason, no .tmp left, the old report kept.
  void ExpectCleanFailure(const std::string& folder, const std::string& reason) {
    const std::string path = folder + "/junit.xml";
    ASSERT_TRUE(WriteReportFile(path, "<old/>\n").ok());
    const Status status = WriteReportFile(path, std::string(1 << 20, 'x'));
    ASSERT_FALSE(status.ok()) << "1 MiB fitted";
    EXPECT_EQ(status.code(), Status::Code::kIoError);
    EXPECT_THAT(status.message(), HasSubstr("cannot write " + path));
    EXPECT_THAT(status.message(), HasSubstr(reason));
    EXPECT_FALSE(fs::exists(path + ".tmp"));
    EXPECT_EQ(Read(path), "<old/>\n");
  }
};

TEST_F(ReportFileTest, ReplacesTheReportWhole) {
  const std::string path = dir_ + "/sub/summary.json";
  ASSERT_TRUE(WriteReportFile(path, "one\n").ok());
  ASSERT_TRUE(WriteReportFile(path, "two\n").ok());
  EXPECT_EQ(Read(path), "two\n");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(ReportFileTest, ALinkOrFifoPlantedAtTheTemporaryIsReplacedNeverFollowed) {
  const std::string victim = dir_ + "/victim";
  std::ofstream(victim) << "keep me";
  const std::string path = dir_ + "/summary.json";
  fs::create_symlink(victim, path + ".tmp");
  ASSERT_TRUE(WriteReportFile(path, "report\n").ok());
  EXPECT_EQ(Read(victim), "keep me");  // it used to be written through the link
  EXPECT_EQ(Read(path), "report\n");
  ASSERT_EQ(mkfifo((path + ".tmp").c_str(), 0644), 0);
  ASSERT_TRUE(WriteReportFile(path, "again\n").ok());  // it used to wait for a reader forever
  EXPECT_EQ(Read(path), "again\n");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(ReportFileTest, AFullDiskLeavesNoTemporaryAndSaysWhy) {
  const std::string mount_point = dir_ + "/tmpfs";
  fs::create_directory(mount_point);
  if (mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs (" << std::strerror(errno)
                 << "); AFileSizeLimitLeavesNoTemporaryAndSaysWhy covers the same failure";
  }
  struct Unmount {
    std::string path;
    ~Unmount() { umount2(path.c_str(), MNT_DETACH); }
  } unmount{mount_point};
  ExpectCleanFailure(mount_point, std::strerror(ENOSPC));
}

TEST_F(ReportFileTest, AFileSizeLimitLeavesNoTemporaryAndSaysWhy) {
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto previous = signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
  struct rlimit small = saved;
  small.rlim_cur = 64 * 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  ExpectCleanFailure(dir_, std::strerror(EFBIG));
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, previous);
}

}  // namespace
}  // namespace opverify
