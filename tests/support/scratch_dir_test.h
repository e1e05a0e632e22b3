// A test fixture that works in a fresh folder of its own, removed with all
// it holds after the test. A fixture that overrides SetUp calls
// ASSERT_NO_FATAL_FAILURE(ScratchDirTest::SetUp()) first; one that overrides
// TearDown closes what it keeps open in dir_ before ScratchDirTest::TearDown().
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>  // mkdtemp (POSIX)

#include <filesystem>
#include <string>

namespace opverify::testing {

class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "opverify-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string dir_;  // the test's folder
};

}  // namespace opverify::testing
