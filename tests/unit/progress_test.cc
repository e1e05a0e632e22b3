// Rank 0's console during a batch: what the progress line says (operators in
// flight, failures so far, the share done), that an unchanged line is not
// printed again, the -v lines, the JSONL stream, and the failed-case list at
// the end; every name and message from a case is untrusted.
#include "runner/scheduler/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "runner/common/failure_list.h"
#include "runner/common/utf8.h"

namespace opverify {
namespace {

using nlohmann::json;

// A progress writing into a temporary file; Text() reads back what it wrote.
class Captured {
 public:
  explicit Captured(ProgressPlan plan, ProgressOutput output = {}) {
    output.out = text_;
    if (output.jsonl == reinterpret_cast<std::FILE*>(1)) output.jsonl = jsonl_;
    progress = std::make_unique<Progress>(std::move(plan), output);
  }
  ~Captured() {
    std::fclose(text_);
    std::fclose(jsonl_);
  }
  static std::string Read(std::FILE* f) {
    std::fflush(f);
    std::rewind(f);
    std::string all;
    char buffer[4096];
    while (std::fgets(buffer, sizeof buffer, f) != nullptr) all += buffer;
    return all;
  }
  std::string Text() const { return Read(text_); }
  std::vector<std::string> JsonlLines() const {
    std::vector<std::string> lines;
    std::istringstream in(Read(jsonl_));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  std::unique_ptr<Progress> progress;

 private:
  std::FILE* text_ = std::tmpfile();
  std::FILE* jsonl_ = std::tmpfile();
};

// Wants a JSONL stream in the Captured's own file.
ProgressOutput WithJsonl(ProgressOutput output = {}) {
  output.jsonl = reinterpret_cast<std::FILE*>(1);
  return output;
}

ProgressPlan TwoOperators() { return {2, {"softmax", "layer_norm"}, {6, 4}}; }

json Case(const std::string& id, bool passed, const std::string& error = "",
          const std::string& message = "") {
  return {{"case_id", id},       {"op", id.substr(0, id.find('/'))},
          {"index", 0},          {"passed", passed},
          {"error_type", error}, {"message", message},
          {"dtype", "float16"},  {"wall_ms", 12.0}};
}

TEST(Progress, TheLineNamesTheOperatorsInFlightAndCountsFailures) {
  Captured c(TwoOperators());
  c.progress->ItemStarted(0, 0, 0);
  c.progress->ItemStarted(1, 1, 1);
  c.progress->CaseDone(0, Case("softmax/#1", true));
  c.progress->CaseDone(1, Case("layer_norm/#1", false, "AccuracyError"));
  c.progress->CaseDone(1, Case("layer_norm/#2", true));
  const std::string line = c.progress->Line();
  EXPECT_EQ(line.rfind(
                "[ 3/10  30.0%] 1 failed · rank 0: softmax, rank 1: layer_norm · 00:00 elapsed", 0),
            0u)
      << line;
  EXPECT_NE(line.find(" left"), std::string::npos) << line;
}

TEST(Progress, TheLineShowsTheAbTimeThatItsEstimateCounts) {
  Captured c(TwoOperators());
  c.progress->ItemStarted(0, 0, 0);
  c.progress->CaseDone(0, Case("softmax/#1", true));
  EXPECT_EQ(c.progress->Line().find("A/B"), std::string::npos) << c.progress->Line();
  json failed = Case("softmax/#2", false, "AccuracyError");
  failed["ab_ms"] = 125000.0;
  c.progress->CaseDone(0, failed);
  EXPECT_NE(c.progress->Line().find(" elapsed (A/B 02:05), ~"), std::string::npos)
      << c.progress->Line();
}

TEST(Progress, RanksOnOneOperatorAreOneGroupAndIdleRanksAreNotShown) {
  Captured c({3, {"matmul"}, {2, 2, 2}});
  c.progress->ItemStarted(0, 0, 0);
  c.progress->ItemStarted(2, 1, 0);
  c.progress->ItemStarted(5, 2, 0);
  EXPECT_NE(c.progress->Line().find("· ranks 0,2,5: matmul ·"), std::string::npos)
      << c.progress->Line();
  c.progress->ItemDone(2);
  c.progress->ItemDone(5);
  EXPECT_NE(c.progress->Line().find("· rank 0: matmul ·"), std::string::npos) << c.progress->Line();
}

TEST(Progress, UnknownCaseCountsShowItemsUntilTheirItemsEnd) {
  Captured c({2, {"own_cases", "sweep"}, {-1, 3}});
  c.progress->ItemStarted(0, 0, 0);
  c.progress->CaseDone(0, Case("own_cases/#1", true));
  c.progress->CaseDone(0, Case("own_cases/#2", true));
  EXPECT_EQ(c.progress->Line().rfind("[2 cases, 0/2 items   0.0%] 0 failed · rank 0: own_cases", 0),
            0u)
      << c.progress->Line();
  c.progress->ItemDone(0);  // its count is now known: 2
  EXPECT_EQ(c.progress->Line().rfind("[2/5  40.0%] 0 failed", 0), 0u) << c.progress->Line();
}

TEST(Progress, APlainLineIsPrintedOnlyWhenSomethingChanged) {
  ProgressOutput output;
  output.style = ProgressOutput::Style::kPlain;
  output.plain_interval_s = 0;
  Captured c(TwoOperators(), output);
  c.progress->ItemStarted(0, 0, 0);
  for (int i = 0; i < 50; ++i) c.progress->Tick();  // nothing new: one line
  c.progress->CaseDone(0, Case("softmax/#1", true));
  for (int i = 0; i < 50; ++i) c.progress->Tick();
  c.progress->ItemDone(0);
  c.progress->Finish();
  const std::string text = c.Text();
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u) << text;  // started, a case, the item done, the last line
  EXPECT_NE(lines[0].find("[ 0/10   0.0%] 0 failed · rank 0: softmax"), std::string::npos) << text;
  EXPECT_NE(lines[1].find("[ 1/10  10.0%]"), std::string::npos) << text;
  EXPECT_EQ(lines[2].rfind("[1/5  20.0%] 0 failed · 00:00", 0), 0u) << text;  // item 0 held 1 case
  EXPECT_EQ(lines[2].find("rank 0"), std::string::npos) << text;
}

TEST(Progress, QuietProgressPrintsNothing) {
  ProgressOutput output;
  output.style = ProgressOutput::Style::kNone;
  Captured c(TwoOperators(), output);
  c.progress->ItemStarted(0, 0, 0);
  c.progress->CaseDone(0, Case("softmax/#1", false, "Crash"));
  c.progress->ItemDone(0);
  c.progress->Finish();
  EXPECT_EQ(c.Text(), "");
  EXPECT_EQ(c.progress->failed(), 1);
}

TEST(Progress, VerboseLinesNameTheCaseAndAFailuresTypeWithoutEscapes) {
  ProgressOutput output;
  output.style = ProgressOutput::Style::kNone;
  output.verbose = true;
  Captured c(TwoOperators(), output);
  c.progress->ItemStarted(1, 0, 0);
  c.progress->CaseDone(1, Case("softmax/#1", true));
  c.progress->CaseDone(1, Case("softmax/\x1b]0;owned\x07#2", false, "AccuracyError",
                               "line one\nline \x1b[31mtwo\x1b[0m"));
  const std::string text = c.Text();
  EXPECT_NE(text.find("PASSED softmax/#1 (rank 1, 12 ms)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("FAILED softmax/#2  AccuracyError  line one line two (rank 1, 12 ms)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
}

TEST(Progress, AVerboseFailedLineSaysTheAbClass) {
  ProgressOutput output;
  output.style = ProgressOutput::Style::kNone;
  output.verbose = true;
  Captured c(TwoOperators(), output);
  c.progress->ItemStarted(1, 0, 0);
  CaseSummary failed = Case("softmax/#2", false, "AccuracyError", "too far");
  failed.ab = "real_defect";
  c.progress->CaseDone(1, failed);
  EXPECT_NE(c.Text().find("FAILED softmax/#2  AccuracyError (real_defect)  too far (rank 1, 12 ms)\n"),
            std::string::npos)
      << c.Text();
}

TEST(Progress, ALiveLineIsCutToTheTerminalWidth) {
  ProgressOutput output;
  output.style = ProgressOutput::Style::kLine;
  output.width = 40;
  Captured c({1, {std::string(200, 'x')}, {5}}, output);
  c.progress->ItemStarted(0, 0, 0);
  c.progress->Finish();
  const std::string text = c.Text();
  ASSERT_EQ(text.rfind("\r\033[K", 0), 0u);
  // The control sequence, 39 columns, the newline.
  EXPECT_EQ(CodePointCount(text), 4u + 39u + 1u) << text;
}

TEST(Progress, JsonlIsOneValidObjectPerCaseEvenForHostileText) {
  Captured c(TwoOperators(), WithJsonl());
  c.progress->ItemStarted(3, 0, 0);
  c.progress->CaseDone(3, Case("softmax/#1", true));
  json hostile = Case("softmax/\"#2\"\n", false, "NaNMismatch", "bad \x1b[2J bytes");
  hostile["message"] = std::string("bad \xff\xfe utf-8 \x1b[2J");  // as a store could hold it
  c.progress->CaseDone(3, hostile);
  c.progress->CaseDone(3, {{"kind", "item"}, {"item_ms", 5.0}});  // no case: no line
  const std::vector<std::string> lines = c.JsonlLines();
  ASSERT_EQ(lines.size(), 2u);
  const json first = json::parse(lines[0]);
  EXPECT_EQ(first["case_id"], "softmax/#1");
  EXPECT_EQ(first["op"], "softmax");
  EXPECT_EQ(first["dtype"], "float16");
  EXPECT_EQ(first["verdict"], "passed");
  EXPECT_TRUE(first["error_type"].is_null());
  EXPECT_EQ(first["rank"], 3);
  EXPECT_DOUBLE_EQ(first["wall_ms"].get<double>(), 12.0);
  EXPECT_EQ(first["time"].get<std::string>().size(),
            std::string("2026-12-01T23:05:01.123Z").size());
  const json second = json::parse(lines[1]);
  EXPECT_EQ(second["case_id"], "softmax/\"#2\"\n");
  EXPECT_EQ(second["verdict"], "failed");
  EXPECT_EQ(second["error_type"], "NaNMismatch");
  EXPECT_NE(second["message"].get<std::string>().find("\xEF\xBF\xBD"),
            std::string::npos);                         // U+FFFD
  EXPECT_EQ(lines[1].find('\x1b'), std::string::npos);  // escaped as \u001b
}

TEST(Progress, AChunksCaseTakesTheClassOfTheCaseWhoseAbItInheritsWhenThatCameFirst) {
  Captured c(TwoOperators(), WithJsonl());
  const auto failed = [](const std::string& id, json ab, const std::string& from) {
    json line = Case(id, false, "AccuracyError", "eco failed");
    line["ab"] = std::move(ab);
    if (!from.empty()) line["ab_inherited_from"] = from;
    return line;
  };
  c.progress->CaseDone(0, failed("softmax/#1", "real_defect", ""));
  c.progress->CaseDone(1, failed("softmax/#3", nullptr, "softmax/#1"));  // another chunk
  c.progress->CaseDone(1, failed("softmax/#4", nullptr, "softmax/#3"));  // a chain
  c.progress->CaseDone(1, failed("softmax/#5", nullptr, "softmax/#2"));  // #2's line comes later
  c.progress->CaseDone(0, failed("softmax/#2", "nondeterministic", ""));
  const std::vector<std::string> lines = c.JsonlLines();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(json::parse(lines[0])["ab"], "real_defect");
  EXPECT_FALSE(json::parse(lines[0]).contains("ab_inherited_from"));
  EXPECT_EQ(json::parse(lines[1])["ab"], "real_defect");
  EXPECT_EQ(json::parse(lines[1])["ab_inherited_from"], "softmax/#1");
  EXPECT_EQ(json::parse(lines[2])["ab"], "real_defect");
  EXPECT_TRUE(json::parse(lines[3])["ab"].is_null());  // not known yet: named, not guessed
  EXPECT_EQ(json::parse(lines[3])["ab_inherited_from"], "softmax/#2");
}

TEST(Progress, TheTimelineHasEachItemOnItsRankWithItsPhases) {
  ProgressOutput quiet;
  quiet.style = ProgressOutput::Style::kNone;
  Captured c(TwoOperators(), quiet);
  c.progress->ItemStarted(0, 0, 0);
  c.progress->ItemStarted(1, 1, 1);
  c.progress->CaseDone(0, Case("softmax/0", true));
  c.progress->CaseDone(0, {{"kind", "item"},
                           {"item_ms", 3000.0},
                           {"startup_ms", 1000.0},
                           {"compile_ms", 500.0},
                           {"cases_ms", 1500.0},
                           {"ab_ms", 0.0},
                           {"store_ms", 0.0},
                           {"bench_ms", 0.0},
                           {"stopped_ms", 250.0},
                           {"cases", 1}});
  c.progress->ItemDone(0);
  c.progress->ItemDone(1);  // a rank that sent no item summary (its store failed)
  EXPECT_DOUBLE_EQ(c.progress->stopped_s(), 0.25);
  const json timeline = c.progress->Timeline();
  ASSERT_EQ(timeline.size(), 2u);
  EXPECT_EQ(timeline[0]["rank"], 0);
  EXPECT_EQ(timeline[0]["op"], "softmax");
  EXPECT_EQ(timeline[0]["item"], 0);
  EXPECT_DOUBLE_EQ(timeline[0]["startup_s"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(timeline[0]["compile_s"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(timeline[0]["cases_s"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(timeline[0]["stopped_s"].get<double>(), 0.25);
  EXPECT_EQ(timeline[0]["cases"], 1);
  EXPECT_LE(timeline[0]["start_s"].get<double>(), timeline[0]["end_s"].get<double>());
  EXPECT_EQ(timeline[1]["rank"], 1);
  EXPECT_EQ(timeline[1]["op"], "layer_norm");
  EXPECT_FALSE(timeline[1].contains("startup_s"));
  EXPECT_LE(timeline[1]["start_s"].get<double>(), timeline[1]["end_s"].get<double>());
}

TEST(FailureList, OneLineEachCappedWithTheCountOfTheRest) {
  std::vector<FailedCase> failed;
  for (int i = 1; i <= 53; ++i)
    failed.push_back({"op/#" + std::to_string(i), "AccuracyError", "first\nsecond\tthird", ""});
  failed[0].id = "evil\x1b[2J/#1";
  const std::vector<std::string> lines = FailureListLines(failed, 50, "run/report.md");
  ASSERT_EQ(lines.size(), 51u);
  EXPECT_EQ(lines[0], "FAILED evil/#1  AccuracyError  first second third");
  EXPECT_EQ(lines[49], "FAILED op/#50  AccuracyError  first second third");
  EXPECT_EQ(lines[50], "... and 3 more (see run/report.md)");
  const std::vector<std::string> all = FailureListLines({{"a/#1", "Crash", "", ""}}, 50, "x");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], "FAILED a/#1  Crash");
  const std::string long_message(1000, 'm');
  const std::string cut = FailureListLines({{"a/#1", "Crash", long_message, ""}}, 50, "x")[0];
  EXPECT_EQ(cut, "FAILED a/#1  Crash  " + std::string(157, 'm') + "...");
  // The A/B's class after the type, as the failing-operators lines show it.
  const std::vector<std::string> classified =
      FailureListLines({{"a/#1", "AccuracyError", "too far", "reference_suspect"}}, 50, "x");
  EXPECT_EQ(classified[0], "FAILED a/#1  AccuracyError (reference_suspect)  too far");
}

}  // namespace
}  // namespace opverify
