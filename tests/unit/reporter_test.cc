// Each report format over a hand-built run model: what a user finds in the
// run folder's files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>

#include "reduce/html_page.h"
#include "reduce/html_reporter.h"
#include "reduce/junit_reporter.h"
#include "reduce/markdown_reporter.h"
#include "reduce/perf_result_reporter.h"
#include "reduce/precision_reporter.h"
#include "reduce/report_extras.h"
#include "reduce/summary_json_reporter.h"
#include "reduce/verify_result_reporter.h"
#include "tests/support/scratch_dir_test.h"

namespace opverify {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

CaseRecord Case(const std::string& op, int index, bool passed) {
  CaseRecord c;
  c.op_name = op;
  c.case_index = index;
  c.case_id = op + "/" + std::to_string(index);
  c.passed = passed;
  c.timings = {{"wall_ms", 250.0}};
  c.outputs = json::array(
      {{{"dtype", "float16"},
        {"route", "eco"},
        {"standard", "seed"},
        {"passed", passed},
        {"metrics",
         {{"eco", {{"matched_ratio", passed ? 1.0 : 0.98}, {"over_count", 0}, {"passed", passed}}},
          {"mere_mare",
           {{"MERE", 1e-4}, {"MARE", 2e-3}, {"threshold", 9.77e-4}, {"passed", passed}}}}}}});
  if (!passed) {
    c.error_type = "AccuracyError";
    c.error_msg = "max diff <0.5> | too large\nsecond line";
  }
  return c;
}

// Two operators: "relu" passes and was benchmarked at 2x; "<b>bad</b>"
// fails one of its two cases, classified by the A/B as a real defect.
RunModel SampleRun() {
  RunModel run;
  run.run_dir = "/runs/sample";
  run.run_info = {{"manifest", "/jobs/sample.json"}, {"manifest_name", "sample"}, {"ranks", 2}};
  run.info = run.run_info.get<RunInfo>();
  OperatorModel bad;
  bad.name = "<b>bad</b>";
  CaseRecord defect = Case(bad.name, 1, false);
  defect.ab = {{"classification", "real_defect"},
               {"attempts", json::array({{{"label", "fresh_cache"}}})}};
  bad.cases = {CaseModel(Case(bad.name, 0, true)), CaseModel(defect)};
  bad.facts.impl_name = "cpu_impl";
  bad.passed = 1;
  bad.failed = 1;
  bad.error_types = {{"AccuracyError", 1}};
  bad.spent.wall_ms = 500;
  bad.dtypes = {{"float16", {2, 1}}};
  bad.max_rel_diff = 0.5;
  bad.repro = "opverify-batch '/jobs/sample.json' --filter '<b>bad</b>'";
  OperatorModel relu;
  relu.name = "relu";
  relu.cases = {CaseModel(Case("relu", 0, true))};
  relu.passed = 1;
  relu.spent.wall_ms = 250;
  relu.dtypes = {{"float32", {1, 0}}};
  relu.all_passed = true;
  relu.repro = "opverify verify --op_name 'relu'";
  OperatorPerformance perf;
  perf.result.op_name = "relu";
  ShapeResult shape;
  shape.case_idx = 1;
  shape.passed = true;
  shape.speedup = 2.0;
  perf.result.shapes = {shape};
  perf.speedup = 2.0;
  perf.framework_ms = 2.0;
  perf.implementation_ms = 1.0;
  relu.performance = perf;
  run.operators = {bad, relu};
  run.totals.operators = 2;
  run.totals.cases = 3;
  run.totals.passed = 2;
  run.totals.failed = 1;
  FailureRow failure{"<b>bad</b>/1",
                     "<b>bad</b>",
                     FailureKind::kAccuracyError,
                     "max diff <0.5> | too large",
                     0,
                     "shards/rank-0000.h5:/cases/000001",
                     bad.cases[1].content.ab,
                     bad.repro};
  run.failures = {failure};
  run.error_types = {{"AccuracyError", 1}};
  run.ab = {{"real_defect", 1}};
  run.performance.operators = {{"relu", 1, 2.0, 2.0, 1.0}};
  run.performance.geomean_speedup = 2.0;
  run.performance.by_dtype = {{"float32", {1, 2.0}}};
  run.performance.fast_p = {{"1.0", 0.5}, {"1.5", 0.5}, {"2.0", 0.0}};
  run.performance.operators_total = 2;
  run.performance.operators_correct = 1;
  return run;
}

class ReporterTest : public testing::ScratchDirTest {
 protected:
  // Runs `reporter` over `run` into the test's folder; its status.
  Status Report(Reporter&& reporter, const RunModel& run = SampleRun()) {
    reporter.ReportContext({dir_});
    Status reported = reporter.ReportRun(run);
    Status finalized = reporter.Finalize();
    return reported.ok() ? finalized : reported;
  }
  std::string Read(const std::string& name) const {
    std::ifstream in(fs::path(dir_) / name, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  json ReadJson(const std::string& name) const { return json::parse(Read(name)); }
};

TEST_F(ReporterTest, SummaryJsonHasTheRunInfoTotalsAndEveryFailure) {
  ASSERT_TRUE(Report(SummaryJsonReporter()).ok());
  const json summary = ReadJson("summary.json");
  EXPECT_EQ(summary["run_dir"], "/runs/sample");
  EXPECT_EQ(summary["manifest_name"], "sample");
  EXPECT_EQ(summary["totals"], json({{"operators", 2},
                                     {"cases", 3},
                                     {"passed", 2},
                                     {"waived", 0},
                                     {"failed", 1},
                                     {"lost", 0}}));
  EXPECT_FALSE(summary.contains("time_split"));
  EXPECT_EQ(summary["ab"], json({{"real_defect", 1}}));
  ASSERT_EQ(summary["failures"].size(), 1u);
  EXPECT_EQ(summary["failures"][0]["ab"], "real_defect");
  EXPECT_EQ(summary["operators"][0]["dtypes"]["float16"], json({{"cases", 2}, {"failed", 1}}));
  EXPECT_EQ(summary["operators"][1]["max_rel_diff"], nullptr);
  EXPECT_EQ(summary["performance"]["operators_benchmarked"], 1);
  EXPECT_EQ(summary["performance"]["operators"][0]["speedup"], 2.0);
  EXPECT_EQ(summary["performance"]["fast_p"]["1.5"], 0.5);
}

TEST_F(ReporterTest, SummaryJsonSaysWhatOfAnOperatorsCompilationTheCacheServed) {
  RunModel run = SampleRun();
  run.operators[0].spent.compile_ms = 1500;
  run.operators[0].spent.kernels_compiled = 3;
  run.operators[0].spent.compile_cached_ms = 500;
  run.operators[0].spent.kernels_cached = 2;
  run.operators[1].spent.compile_ms = 200;
  run.operators[1].spent.kernels_compiled = 1;  // hits unknown
  run.time_split = TimeSplit{};
  run.time_split->compile_cached_s = 0.5;
  ASSERT_TRUE(Report(SummaryJsonReporter(), run).ok());
  const json summary = ReadJson("summary.json");
  EXPECT_EQ(summary["operators"][0]["compile"],
            json({{"s", 1.5}, {"kernels", 3}, {"from_cache_s", 0.5}, {"kernels_from_cache", 2}}));
  EXPECT_EQ(summary["operators"][1]["compile"], json({{"s", 0.2},
                                                      {"kernels", 1},
                                                      {"from_cache_s", nullptr},
                                                      {"kernels_from_cache", nullptr}}));
  EXPECT_EQ(summary["time_split"]["compile_cached_s"], 0.5);
  ASSERT_TRUE(
      Report(SummaryJsonReporter()).ok());  // nothing compiled: no compile row, no cache line
  EXPECT_FALSE(ReadJson("summary.json")["operators"][0].contains("compile"));
}

TEST_F(ReporterTest, SummaryJsonSaysHowTheImplementationExecutorsStarted) {
  RunModel run = SampleRun();
  run.operators[0].facts.startup = {
      {"spare", false},
      {"open_ms", 2000.0},
      {"executor", {{"interpreter_ms", 10.0}, {"torch_ms", 1500.0}}}};
  run.operators[1].facts.startup = {
      {"spare", true},
      {"spare_wait_ms", 5.0},
      {"open_ms", 12.0},
      {"executor",
       {{"interpreter_ms", 20.0}, {"torch_ms", 1300.0}, {"preload_ms", 800.0}, {"preloaded", {"lib"}}}}};
  ASSERT_TRUE(Report(SummaryJsonReporter(), run).ok());
  const json starts = ReadJson("summary.json")["executor_starts"];
  EXPECT_EQ(starts["executors"], 2);
  EXPECT_EQ(starts["from_spares"], 1);
  EXPECT_EQ(starts["preloaded"], 1);
  EXPECT_EQ(starts["open_ms"], json({{"median", 1006.0}, {"p90", 2000.0}, {"max", 2000.0}, {"total_s", 2.012}}));
  EXPECT_EQ(starts["own_ms_median"],
            json({{"interpreter_ms", 15.0}, {"preload_ms", 800.0}, {"torch_ms", 1400.0}}));
  ASSERT_TRUE(Report(SummaryJsonReporter()).ok());  // no start recorded: no section
  EXPECT_FALSE(ReadJson("summary.json").contains("executor_starts"));
}

TEST_F(ReporterTest, SummaryJsonKeepsTheKeysInTheSchemasOrder) {
  RunModel run = SampleRun();
  run.time_split = TimeSplit{};
  ASSERT_TRUE(Report(SummaryJsonReporter(), run).ok());
  const std::string text = Read("summary.json");
  EXPECT_LT(text.find("\"run_dir\""), text.find("\"manifest\""));
  EXPECT_LT(text.find("\"totals\""), text.find("\"time_split\""));
  EXPECT_LT(text.find("\"time_split\""), text.find("\"performance\""));
  EXPECT_LT(text.find("\"failures\""), text.find("\"problems\""));
  EXPECT_EQ(text.back(), '\n');
}

TEST_F(ReporterTest, JUnitHasASuitePerOperatorAndTheFailureWithItsAbClass) {
  ASSERT_TRUE(Report(JUnitReporter()).ok());
  const std::string xml = Read("junit.xml");
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"sample\" tests=\"3\" failures=\"1\" errors=\"0\" "
                             "skipped=\"0\" time=\"0.750000\">"));
  EXPECT_THAT(xml,
              HasSubstr("<testsuite name=\"&lt;b&gt;bad&lt;/b&gt;\" tests=\"2\" failures=\"1\""));
  EXPECT_THAT(
      xml,
      HasSubstr("<property name=\"repro\" value=\"opverify verify --op_name &apos;relu&apos;\"/>"));
  EXPECT_THAT(
      xml,
      HasSubstr("message=\"AccuracyError: max diff &lt;0.5&gt; | too large [A/B: real_defect]\""));
  EXPECT_THAT(xml,
              HasSubstr("A/B: real_defect\n  attempt {&quot;label&quot;:&quot;fresh_cache&quot;}"));
  // A benchmarked case carries its shape's numbers; its operator the means and the speedup.
  EXPECT_THAT(xml,
              HasSubstr("<testcase classname=\"relu\" name=\"relu/0\" time=\"0.250000\">\n"
                        "      <properties>\n        <property name=\"speedup\" value=\"2\"/>"));
  EXPECT_THAT(xml, HasSubstr("<property name=\"latency_ms\" value=\"1\"/>\n"
                             "      <property name=\"framework_latency_ms\" value=\"2\"/>"));
  EXPECT_THAT(
      xml,
      HasSubstr("<testcase classname=\"&lt;b&gt;bad&lt;/b&gt;\" name=\"&lt;b&gt;bad&lt;/b&gt;/0\" "
                "time=\"0.250000\"/>"));
}

TEST_F(ReporterTest, MarkdownListsOperatorsAndEachFailingOperatorsReproOnce) {
  RunModel run = SampleRun();
  run.failures.push_back(run.failures[0]);
  ASSERT_TRUE(Report(MarkdownReporter(), run).ok());
  const std::string md = Read("report.md");
  EXPECT_THAT(md, HasSubstr("- operators: 2, cases: 3, passed: 2, failed: 1\n"));
  EXPECT_THAT(md, HasSubstr("| relu | 1 | 1 | 0 |  | 2.00x |\n"));
  // Markup in a name is text, never HTML for the renderer.
  EXPECT_THAT(md, HasSubstr("| &lt;b&gt;bad&lt;/b&gt; | 2 | 1 | 1 | AccuracyError 1  | - |\n"));
  EXPECT_THAT(md, HasSubstr("- geometric mean speedup: 2.000x\n- fast_1.0: 0.50\n"));
  // Escaped: a bare pipe would end the cell.
  EXPECT_THAT(md, HasSubstr("| real_defect | max diff &lt;0.5&gt; \\| too large |"));
  const std::string repro =
      "```sh\nopverify-batch '/jobs/sample.json' --filter '<b>bad</b>'\n```\n";
  const auto first = md.find(repro);
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(md.find(repro, first + 1), std::string::npos);
}

TEST_F(ReporterTest, MarkdownWithoutFailuresHasNoFailuresSection) {
  RunModel run = SampleRun();
  run.failures.clear();
  ASSERT_TRUE(Report(MarkdownReporter(), run).ok());
  EXPECT_THAT(Read("report.md"), Not(HasSubstr("## Failures")));
}

TEST_F(ReporterTest, HtmlEscapesNamesAndShowsTheGridAndFailures) {
  ASSERT_TRUE(Report(HtmlReporter()).ok());
  const std::string html = Read("report.html");
  EXPECT_THAT(html, Not(HasSubstr("<b>bad</b>")));
  EXPECT_THAT(
      html,
      HasSubstr(
          "<tr><th>&lt;b&gt;bad&lt;/b&gt;</th><td class=\"fail\" title=\"1 of 2 cases failed\">"
          "&#10007; 1/2</td><td class=\"none\"></td><td>-</td><td>-</td><td></td>"));
  // Its files, by a link that is a relative path whatever the name holds.
  EXPECT_THAT(html, HasSubstr("<a href=\"ops/b_bad_b-"));
  EXPECT_THAT(html, HasSubstr("/verify_result.json\">verify</a>"));
  // The first screen: failures grouped by error type and A/B class, the first one linked.
  EXPECT_THAT(
      html, HasSubstr("<tr class=\"fg\"><td>AccuracyError</td><td>real_defect</td><td>1</td>"
                      "<td>1</td><td><a class=\"fcase\" id=\"first-failure\" href=\"#op-b_bad_b-"));
  EXPECT_THAT(html, HasSubstr("No baseline:"));
  EXPECT_THAT(html, HasSubstr("<tr><th>manifest</th><td>/jobs/sample.json (sample)</td></tr>"));
  EXPECT_THAT(
      html,
      HasSubstr("<td class=\"pass\" title=\"0 of 1 cases failed\">&#10003; 1</td><td>2.00x</td>"));
  EXPECT_THAT(
      html, HasSubstr("over 1 operators: 2.00x; fast_1.0 0.50, fast_1.5 0.50, fast_2.0 0.00.</p>"));
  // Least precise: each operator by its own route's margin (eco: the mismatched share of the 1%).
  EXPECT_THAT(html, HasSubstr("<tr data-route=\"eco\"><td>eco</td><td>&lt;b&gt;bad&lt;/b&gt;</td>"
                              "<td>&lt;b&gt;bad&lt;/b&gt;/1</td><td class=\"bad\">2</td>"
                              "<td>mismatched share 0.02 / 0.01</td></tr>\n<tr data-route=\"eco\">"
                              "<td>eco</td><td>relu</td><td>relu/0</td><td>0</td>"));
  EXPECT_THAT(
      html, HasSubstr("<td>real_defect</td><td><pre>max diff &lt;0.5&gt; | too large</pre></td>"));
  EXPECT_THAT(html, Not(HasSubstr("id=\"no-failures\"")));
}

TEST_F(ReporterTest, HtmlAndMarkdownShowTheBaselineDiffAndTheTrend) {
  ReportExtras extras;
  BaselineDiff diff;
  diff.newly_failing = {"<b>bad</b>"};
  diff.slower = {{"relu", 1.25, 0.01, 3}};
  diff.fixed = {"gone|fixed"};
  extras.baseline = diff;
  extras.baseline_dir = "/runs/<last night>";
  extras.history["relu"] = {{"2026-11-30", "c1", 0.02}, {"2026-12-01", "c<2>", 0.01}};
  for (Reporter* reporter :
       std::initializer_list<Reporter*>{new HtmlReporter(), new MarkdownReporter()}) {
    std::unique_ptr<Reporter> owned(reporter);
    reporter->ReportContext({dir_, &extras});
    ASSERT_TRUE(reporter->ReportRun(SampleRun()).ok());
  }
  const std::string html = Read("report.html");
  EXPECT_THAT(html, HasSubstr("<code>/runs/&lt;last night&gt;</code>: <span class=\"bad\" "
                              "id=\"regressed\">REGRESSED</span>"));
  EXPECT_THAT(html, HasSubstr("newly failing (1): <a href=\"#op-b_bad_b-"));
  EXPECT_THAT(html, HasSubstr("\">&lt;b&gt;bad&lt;/b&gt;</a></li>"));
  EXPECT_THAT(html, HasSubstr("slower (1): <a href=\"#op-relu\">relu</a> +25.0% <span "
                              "class=\"note\">(noise floor 0.0%)</span></li>"));
  EXPECT_THAT(html, HasSubstr("fixed (1): <a href=\"#op-gone_fixed-"));
  // The trend: two nights, the slower one higher; the commit escaped in its title.
  EXPECT_THAT(html, HasSubstr("<svg class=\"spark\""));
  EXPECT_THAT(html, HasSubstr("<polyline points=\"2.0,2.0 78.0,16.0\"/><circle cx=\"78.0\""));
  EXPECT_THAT(html, HasSubstr("last 0.01 ms (c&lt;2&gt;)</title><polyline"));
  const std::string md = Read("report.md");
  EXPECT_THAT(
      md, HasSubstr(
              "## Against the baseline\n\n`/runs/<last night>`: **REGRESSED**\n\n"
              "- newly failing (1): `<b>bad</b>`\n- slower (1): `relu` +25.0% (noise floor 0.0%, 0 "
              "repeats)\n"
              "- fixed (1): `gone|fixed`\n"));
}

TEST_F(ReporterTest, HtmlGroupsByTheManifestsFirstTagElseByFamily) {
  ReportExtras extras;
  extras.tags["relu"] = {"activation", "nightly"};
  HtmlReporter tagged;
  tagged.ReportContext({dir_, &extras});
  ASSERT_TRUE(tagged.ReportRun(SampleRun()).ok());
  std::string html = Read("report.html");
  EXPECT_THAT(html, HasSubstr("2 groups by the manifest's first tag;"));
  EXPECT_THAT(html, HasSubstr("<summary><b>activation</b>: 1 operators, 1 cases</summary>"));
  EXPECT_THAT(html,
              HasSubstr("<details class=\"group\" open><summary><b>(no tag)</b>: 1 operators, "
                        "2 cases, <span class=\"bad\">1 failing</span></summary>"));
  EXPECT_EQ(html::OperatorGroup("softmax_backward", {}), "softmax");
  EXPECT_EQ(html::OperatorGroup("19_ReLU", {}), "ReLU");
  EXPECT_EQ(html::OperatorGroup("4_abs", {}), "abs");
  EXPECT_EQ(html::OperatorGroup("layer.norm", {}), "layer");
  EXPECT_EQ(html::OperatorGroup("_x", {}), "_x");
}

TEST_F(ReporterTest, HtmlSaysNoneWithoutFailures) {
  RunModel run = SampleRun();
  run.failures.clear();
  ASSERT_TRUE(Report(HtmlReporter(), run).ok());
  EXPECT_THAT(Read("report.html"), HasSubstr("<p id=\"no-failures\">None.</p>"));
}

TEST_F(ReporterTest, PrecisionReportPerOperatorWithItsVerdict) {
  ASSERT_TRUE(Report(PrecisionReporter()).ok());
  // A name that is no file name gets a folder of its own, never a path.
  const std::string bad = Read("ops/" + OperatorFolder("<b>bad</b>") + "/precision_report.md");
  EXPECT_THAT(bad, HasSubstr("- operator: `<b>bad</b>`, implementation `cpu_impl`"));
  EXPECT_THAT(
      bad, HasSubstr(
               "| 2 | 0 | float16 | - | eco | seed | 1.000e-04 | 2.000e-03 | 9.770e-04 | not met | "
               "fail |"));
  EXPECT_THAT(bad, HasSubstr("(1 of 2: FAIL)"));
  EXPECT_THAT(Read("ops/relu/precision_report.md"), HasSubstr("(1 of 1: PASS)"));
}

TEST_F(ReporterTest, VerifyResultPerOperatorCountsItsCases) {
  ASSERT_TRUE(Report(VerifyResultReporter()).ok());
  const json bad = ReadJson("ops/" + OperatorFolder("<b>bad</b>") + "/verify_result.json");
  EXPECT_FALSE(fs::exists(fs::path(dir_) / "ops" / "<b>bad<"));
  EXPECT_EQ(bad["op_name"], "<b>bad</b>");
  EXPECT_EQ(bad["total_cases"], 2);
  EXPECT_EQ(bad["passed_cases"], 1);
  EXPECT_EQ(bad["failed_cases"], 1);
  EXPECT_EQ(ReadJson("ops/relu/verify_result.json")["failed_cases"], 0);
}

TEST_F(ReporterTest, PerfResultOnlyForABenchmarkedOperator) {
  ASSERT_TRUE(Report(PerfResultReporter()).ok());
  const json relu = ReadJson("ops/relu/perf_result.json");
  EXPECT_EQ(relu["op_name"], "relu");
  EXPECT_EQ(relu["speedup_vs_torch"], 2.0);
  EXPECT_FALSE(
      fs::exists(fs::path(dir_) / "ops" / OperatorFolder("<b>bad</b>") / "perf_result.json"));
}

TEST_F(ReporterTest, AReportThatCannotBeWrittenNamesItsFile) {
  std::ofstream(fs::path(dir_) / "ops") << "a file where the folder should be";
  const Status status = Report(VerifyResultReporter());
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.ToString(), HasSubstr("verify_result.json"));
}

}  // namespace
}  // namespace opverify
