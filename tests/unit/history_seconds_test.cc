// What the nightly history predicts of the next night's costs: each
// operator's latest "seconds" (reduce/history.h), the timeline's sums, and
// a history that is missing, damaged or not a file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reduce/history.h"
#include "tests/support/scratch_dir_test.h"

namespace opverify {
namespace {

using nlohmann::json;

class HistorySecondsTest : public testing::ScratchDirTest {
 protected:
  std::string Write(const std::string& text) {
    const std::string path = dir_ + "/history.jsonl";
    std::ofstream(path) << text;
    return path;
  }
};

TEST_F(HistorySecondsTest, TheLatestTimedNightOfEachOperatorWins) {
  const std::string path = Write(
      R"({"op": "mm", "verdict": "passed", "seconds": 900.5})"
      "\n"
      R"({"op": "abs", "verdict": "failed", "seconds": 3})"
      "\n"
      R"({"op": "mm", "verdict": "passed", "seconds": 120.25})"
      "\n"
      R"({"op": "mm", "verdict": "incomplete"})"
      "\n");
  std::vector<std::string> warnings;
  Result<std::map<std::string, double>> seconds = HistorySeconds(path, &warnings);
  ASSERT_TRUE(seconds.ok()) << seconds.status().ToString();
  EXPECT_EQ(seconds.value(), (std::map<std::string, double>{{"abs", 3.0}, {"mm", 120.25}}));
  EXPECT_TRUE(warnings.empty());
}

TEST_F(HistorySecondsTest, LinesThatSayNoTimeArePassedOverAndDamagedOnesNamed) {
  const std::string path = Write(
      R"({"op": "mm", "seconds": 7})"
      "\n"
      R"({"op": "mm", "seconds": "NaN"})"
      "\n"
      R"({"op": "mm", "seconds": -1})"
      "\n"
      R"({"op": 5, "seconds": 2})"
      "\n"
      R"({"op": "mm", "seconds": [1]})"
      "\n"
      "{\"op\": \"abs\", \"seco\n");  // a line a crash cut short
  std::vector<std::string> warnings;
  Result<std::map<std::string, double>> seconds = HistorySeconds(path, &warnings);
  ASSERT_TRUE(seconds.ok()) << seconds.status().ToString();
  EXPECT_EQ(seconds.value(), (std::map<std::string, double>{{"mm", 7.0}}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("history.jsonl:6: skipped"), std::string::npos) << warnings[0];
}

TEST_F(HistorySecondsTest, NoFileIsTheFirstNightAndAFolderIsAnError) {
  std::vector<std::string> warnings;
  Result<std::map<std::string, double>> none = HistorySeconds(dir_ + "/missing.jsonl", &warnings);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  Result<std::map<std::string, double>> folder = HistorySeconds(dir_, &warnings);
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.status().ToString().find(dir_), std::string::npos) << folder.status().ToString();
}

TEST(TimelineOperatorSeconds, SumsEachOperatorsItemsAndPassesOverMalformedOnes) {
  const json timeline = json::parse(R"({"items": [
      {"op": "mm", "start_s": 0, "end_s": 10.5},
      {"op": "mm", "start_s": 2, "end_s": 4},
      {"op": "abs", "start_s": 5, "end_s": 4},
      {"op": "abs", "start_s": "x", "end_s": 9},
      {"op": 3, "start_s": 0, "end_s": 1},
      [], null, {"start_s": 0, "end_s": 1}]})");
  EXPECT_EQ(TimelineOperatorSeconds(timeline),
            (std::map<std::string, double>{{"abs", 0.0}, {"mm", 12.5}}));
  EXPECT_TRUE(TimelineOperatorSeconds(json::parse(R"({"items": "none"})")).empty());
  EXPECT_TRUE(TimelineOperatorSeconds(json::array()).empty());
}

}  // namespace
}  // namespace opverify
