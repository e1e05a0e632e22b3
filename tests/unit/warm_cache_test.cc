// A rank's --cache-dir folder warmed from its siblings': what it lacks is
// hard-linked in, what it has is kept, and nothing that is not a complete
// regular file of a sibling's Triton cache comes across.
#include "runner/batch/warm_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/scratch_dir_test.h"

namespace fs = std::filesystem;

namespace opverify {
namespace {

class WarmCacheTest : public testing::ScratchDirTest {
 protected:
  fs::path Put(const std::string& relative, const std::string& text) {
    const fs::path path = fs::path(dir_) / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path;
  }
  static std::string Read(const fs::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static ino_t Inode(const fs::path& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
  }
};

TEST_F(WarmCacheTest, ARankTakesWhatItsSiblingsCompiledAndKeepsItsOwn) {
  const fs::path theirs = Put("rank-0001/triton/AAA/softmax.cubin", "kernel A");
  Put("rank-0001/triton/AAA/__grp__softmax.json", "group A");
  Put("rank-0002/triton/BBB/dyt.autotune.json", "best config");  // an autotuner's choice
  Put("rank-0002/triton/CCC/add.cubin", "their add");
  Put("rank-0000/triton/CCC/add.cubin", "our add");
  const WarmedCache warmed = WarmFromSiblings(fs::path(dir_) / "rank-0000");
  EXPECT_EQ(warmed.files, 3);
  EXPECT_EQ(warmed.skipped, 0);
  const fs::path ours = fs::path(dir_) / "rank-0000" / "triton";
  EXPECT_EQ(Read(ours / "AAA" / "softmax.cubin"), "kernel A");
  EXPECT_EQ(Inode(ours / "AAA" / "softmax.cubin"), Inode(theirs));  // a link, not a copy
  EXPECT_EQ(Read(ours / "AAA" / "__grp__softmax.json"), "group A");
  EXPECT_EQ(Read(ours / "BBB" / "dyt.autotune.json"), "best config");
  EXPECT_EQ(Read(ours / "CCC" / "add.cubin"), "our add");
  EXPECT_EQ(WarmFromSiblings(fs::path(dir_) / "rank-0000").files, 0);  // nothing new the second time
}

TEST_F(WarmCacheTest, TemporariesLinksAndOtherFoldersAreNotTaken) {
  Put("rank-0001/triton/AAA/k.cubin.tmp.pid_77_123", "half written");
  const fs::path secret = Put("outside/secret", "not a kernel");
  fs::create_directories(fs::path(dir_) / "rank-0001/triton/AAA");
  fs::create_symlink(secret, fs::path(dir_) / "rank-0001/triton/AAA/planted.cubin");
  fs::create_directory_symlink(fs::path(dir_) / "outside", fs::path(dir_) / "rank-0001/triton/DIR");
  Put("rank-0001/home/.flaggems/code.py", "a library's own cache");  // only triton/ is shared
  Put("notes/triton/X/k.cubin", "not a rank folder");
  fs::create_directory_symlink(fs::path(dir_) / "notes", fs::path(dir_) / "rank-0009");
  const WarmedCache warmed = WarmFromSiblings(fs::path(dir_) / "rank-0000");
  EXPECT_EQ(warmed.files, 0);
  EXPECT_FALSE(fs::exists(fs::path(dir_) / "rank-0000" / "triton" / "AAA"));
  EXPECT_FALSE(fs::exists(fs::path(dir_) / "rank-0000" / "home"));
}

TEST_F(WarmCacheTest, AFolderThatIsNotARanksIsLeftAlone) {
  Put("rank-0001/triton/AAA/k.cubin", "kernel");
  EXPECT_EQ(WarmFromSiblings(fs::path(dir_) / "cache").files, 0);
}

}  // namespace
}  // namespace opverify
