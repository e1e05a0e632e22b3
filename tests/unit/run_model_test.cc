// The one aggregation pass behind every report, over hand-made records:
// what a user reads in summary.json, report.md and report.html comes from here.
#include "reduce/run_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace opverify {
namespace {

using nlohmann::json;

CaseRecord Case(const std::string& op, int index, bool passed,
                const std::string& dtype = "torch.float16") {
  CaseRecord c;
  c.op_name = op;
  c.case_index = index;
  c.case_id = op + "/" + std::to_string(index);
  c.passed = passed;
  c.input_desc = json::array({{{"type", "tensor"}, {"shape", {4}}, {"dtype", dtype}}});
  c.timings = {{"wall_ms", 100.0}, {"impl_ms", 10.0}, {"golden_ms", 20.0}, {"compile_ms", 30.0}};
  if (!passed) {
    c.error_type = "AccuracyError";
    c.error_msg = "outputs differ";
  }
  return c;
}

CaseRecord Facts(const std::string& op, json facts) {
  CaseRecord r;
  r.op_name = op;
  r.case_index = -1;
  r.kind = RecordKind::kOperator;
  r.extra = std::move(facts);
  return r;
}

CaseRecord BenchShape(const std::string& op, int case_idx, double speedup,
                      const std::string& dtype = "float16") {
  ShapeResult shape;
  shape.case_idx = case_idx;
  shape.passed = true;
  shape.input_dtypes = {dtype};
  shape.speedup = speedup;
  shape.framework.measured = shape.implementation.measured = true;
  shape.framework.latency_ms = speedup;
  shape.implementation.latency_ms = 1.0;
  CaseRecord r;
  r.op_name = op;
  r.case_index = -1;
  r.kind = RecordKind::kBenchShape;
  r.extra = {{"shape", ShapeResultToJson(shape)}};
  return r;
}

CaseRecord BenchItem(const std::string& op, double review_speedup = 10) {
  BenchConfig settings;
  settings.review_speedup = review_speedup;
  CaseRecord r;
  r.op_name = op;
  r.case_index = -1;
  r.kind = RecordKind::kBenchItem;
  r.extra = {{"settings", settings.ToJson()},
             {"wall_s", 2.5},
             {"environment", {{"device", {{"backend", "cpu"}}}}},
             {"clock", nullptr}};
  return r;
}

const OperatorModel& Op(const RunModel& run, const std::string& name) {
  for (const OperatorModel& op : run.operators) {
    if (op.name == name) return op;
  }
  throw std::runtime_error("no operator " + name);
}

RunModel Build(std::vector<CaseRecord> records, json run_info = json::object()) {
  return BuildRunModel(std::move(records), {}, run_info, "/runs/r1");
}

TEST(RunModel, CasesAreInCaseOrderAndFactsAndBenchmarksAreNotCases) {
  const RunModel run =
      Build({Case("add", 2, true), Facts("add", {{"impl_name", "x"}}), Case("add", 0, true),
             BenchItem("add"), BenchShape("add", 1, 2.0), Case("add", 1, true)});
  ASSERT_EQ(run.operators.size(), 1u);
  const OperatorModel& add = run.operators[0];
  ASSERT_EQ(add.cases.size(), 3u);
  EXPECT_EQ(add.cases[0].case_index, 0);
  EXPECT_EQ(add.cases[2].case_index, 2);
  EXPECT_EQ(add.facts.impl_name, "x");
  EXPECT_EQ(run.totals.cases, 3);
}

TEST(RunModel, TotalsAndVerdictsAddUpPerOperatorAndRun) {
  const RunModel run =
      Build({Case("b", 0, true), Case("b", 1, false), Case("a", 0, false), Case("a", 1, false)});
  ASSERT_EQ(run.operators.size(), 2u);
  EXPECT_EQ(run.operators[0].name, "a");  // by name
  EXPECT_EQ(Op(run, "a").failed, 2);
  EXPECT_EQ(Op(run, "b").passed, 1);
  EXPECT_EQ(Op(run, "b").error_types.at("AccuracyError"), 1);
  EXPECT_EQ(run.totals.operators, 2);
  EXPECT_EQ(run.totals.passed, 1);
  EXPECT_EQ(run.totals.failed, 3);
  EXPECT_EQ(run.error_types.at("AccuracyError"), 3);
  ASSERT_EQ(run.failures.size(), 3u);
  EXPECT_EQ(run.failures[0].case_id, "a/0");  // by operator, then case
  EXPECT_EQ(run.failures[2].case_id, "b/1");
  EXPECT_DOUBLE_EQ(Op(run, "b").wall_s(), 0.2);
}

TEST(RunModel, AFailureKeepsItsAbClassAndTheRunCountsIt) {
  CaseRecord defect = Case("op", 0, false);
  defect.ab = {{"classification", "real_defect"}};
  CaseRecord unclassified = Case("op", 1, false);  // the A/B could not run
  unclassified.ab = {{"classification", nullptr}, {"error", "cannot create a fresh cache folder"}};
  const RunModel run = Build({defect, unclassified, Case("op", 2, false)});
  ASSERT_EQ(run.failures.size(), 3u);
  ASSERT_TRUE(run.failures[0].ab.has_value());
  EXPECT_EQ(run.failures[0].AbClass(), "real_defect");
  ASSERT_TRUE(run.failures[1].ab.has_value());
  EXPECT_FALSE(run.failures[1].AbClass().has_value());
  EXPECT_TRUE(run.failures[1].ab->ClassificationJson().is_null());
  EXPECT_FALSE(run.failures[2].ab.has_value());  // no A/B record at all
  EXPECT_EQ(run.ab.at("real_defect"), 1);
  EXPECT_EQ(run.ab.at("none"), 1);
  EXPECT_EQ(run.ab.size(), 2u);
}

TEST(RunModel, ACaseWhoseAbRanInAnotherChunkTakesThatCasesClass) {
  // Chunk 1 ran the A/B of op/0; chunk 2's op/3 was told to inherit it, and
  // op/4 (same kind, same chunk) names op/0 too or, from an older runner, op/3.
  CaseRecord ran = Case("op", 0, false);
  ran.ab = {{"classification", "reference_suspect"}, {"reference_trust", {{"verdict", "suspect"}}}};
  CaseRecord told = Case("op", 3, false);
  told.ab = {{"classification", nullptr}, {"inherited_from", "op/0"}, {"reference_trust", nullptr}};
  CaseRecord chained = Case("op", 4, false);
  chained.ab = {{"classification", nullptr}, {"inherited_from", "op/3"}};
  CaseRecord lost = Case("op", 5, false);  // its origin was never stored
  lost.ab = {{"classification", nullptr}, {"inherited_from", "op/9"}};
  const RunModel run = Build({ran, told, chained, lost});
  ASSERT_EQ(run.failures.size(), 4u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(run.failures[i].AbClass(), std::optional<std::string>("reference_suspect")) << i;
    EXPECT_TRUE(run.failures[i].reference_suspect()) << i;
  }
  EXPECT_EQ(run.failures[1].ab->inherited_from, "op/0");
  EXPECT_FALSE(run.failures[3].AbClass().has_value());
  EXPECT_EQ(run.ab.at("reference_suspect"), 3);
  EXPECT_EQ(run.ab.at("none"), 1);
}

TEST(RunModel, AFailureMessageIsCutTo300Characters) {
  CaseRecord c = Case("op", 0, false);
  c.error_msg = std::string(1000, 'x');
  const RunModel run = Build({c});
  EXPECT_EQ(run.failures.at(0).message.size(), 300u);
  EXPECT_EQ(run.operators.at(0).cases.at(0).error_msg.size(), 1000u);  // the case keeps it whole
}

TEST(RunModel, ACaseIsFiledUnderItsFirstTensorInputsDtype) {
  CaseRecord listed = Case("op", 2, false);
  listed.input_desc =
      json::array({{{"type", "int"}, {"value", 3}},
                   {{"type", "list"}, {"items", json::array({{{"dtype", "torch.bfloat16"}}})}}});
  CaseRecord scalar = Case("op", 3, true);
  scalar.input_desc = json::array({{{"type", "int"}, {"value", 3}}});
  const RunModel run = Build({Case("op", 0, true), Case("op", 1, true, "float32"), listed, scalar});
  const auto& dtypes = run.operators.at(0).dtypes;
  ASSERT_EQ(dtypes.size(), 4u);
  EXPECT_EQ(dtypes.at("float16").cases, 1);
  EXPECT_EQ(dtypes.at("float32").cases, 1);
  EXPECT_EQ(dtypes.at("bfloat16").failed, 1);
  EXPECT_EQ(dtypes.at("none").cases, 1);
}

TEST(RunModel, TheLargestRelativeDifferenceOverEveryJudgedOutput) {
  CaseRecord a = Case("op", 0, true), b = Case("op", 1, true);
  a.outputs = json::array(
      {{{"metrics", {{"max_rel_diff", 0.25}}}}, {{"metrics", {{"max_rel_diff", 0.5}}}}});
  b.outputs = json::array({{{"metrics", {{"max_rel_diff", 0.125}}}}, {{"route", "exact"}}});
  const RunModel run = Build({a, b, Case("none_judged", 0, true)});
  EXPECT_EQ(Op(run, "op").max_rel_diff, 0.5);
  EXPECT_FALSE(Op(run, "none_judged").max_rel_diff.has_value());
}

TEST(RunModel, OnlyAnOperatorWhoseEveryCasePassedHasAPerformance) {
  const RunModel run =
      Build({Case("good", 0, true), BenchItem("good"), BenchShape("good", 1, 2.0),
             Case("bad", 0, false), BenchItem("bad"), BenchShape("bad", 1, 2.0),
             // two of its three cases were stored
             Facts("short", {{"case_count", 3}}), Case("short", 0, true), Case("short", 1, true),
             BenchItem("short"), BenchShape("short", 1, 2.0)});
  EXPECT_TRUE(Op(run, "good").performance.has_value());
  EXPECT_FALSE(Op(run, "bad").performance.has_value());
  EXPECT_FALSE(Op(run, "short").all_passed);
  EXPECT_FALSE(Op(run, "short").performance.has_value());
  EXPECT_EQ(run.performance.operators_total, 3);
  EXPECT_EQ(run.performance.operators_correct, 1);
  ASSERT_EQ(run.performance.operators.size(), 1u);
  EXPECT_EQ(run.performance.operators[0].name, "good");
}

TEST(RunModel, TheLatestStoredShapeCountsAndMissingShapesAreWarned) {
  const RunModel run = Build({Case("op", 0, true), Case("op", 1, true), BenchItem("op"),
                              BenchShape("op", 1, 2.0), BenchShape("op", 1, 4.0)});
  const OperatorPerformance& perf = *Op(run, "op").performance;
  ASSERT_EQ(perf.result.shapes.size(), 1u);
  EXPECT_EQ(perf.result.shapes[0].speedup, 4.0);
  EXPECT_EQ(perf.speedup, 4.0);
  EXPECT_EQ(perf.framework_ms, 4.0);
  EXPECT_EQ(perf.implementation_ms, 1.0);
  EXPECT_DOUBLE_EQ(perf.result.wall_s, 2.5);
  ASSERT_EQ(perf.result.warnings.size(), 1u);
  EXPECT_NE(perf.result.warnings[0].find("1 of 2 shapes have no stored benchmark"),
            std::string::npos);
}

TEST(RunModel, GeometricMeansPerDtypeAndOverallAndFastP) {
  const RunModel run =
      Build({Case("a", 0, true), Case("a", 1, true), BenchItem("a"), BenchShape("a", 1, 2.0),
             BenchShape("a", 2, 8.0, "float32"), Case("b", 0, true), BenchItem("b"),
             BenchShape("b", 1, 0.5), Case("c", 0, false), Case("d", 0, true)});
  const PerformanceModel& p = run.performance;
  ASSERT_EQ(p.operators.size(), 2u);
  EXPECT_DOUBLE_EQ(*p.operators[0].speedup, 4.0);        // sqrt(2 x 8)
  EXPECT_DOUBLE_EQ(*p.geomean_speedup, std::sqrt(2.0));  // over the operators' 4 and 0.5
  EXPECT_EQ(p.by_dtype.at("float16").shapes, 2);
  EXPECT_DOUBLE_EQ(*p.by_dtype.at("float16").geomean_speedup, 1.0);
  EXPECT_DOUBLE_EQ(*p.by_dtype.at("float32").geomean_speedup, 8.0);
  ASSERT_EQ(p.fast_p.size(), 3u);
  EXPECT_EQ(p.fast_p[0].first, "1.0");
  EXPECT_DOUBLE_EQ(p.fast_p[0].second, 0.25);  // one of the four operators is correct and faster
  EXPECT_DOUBLE_EQ(p.fast_p[2].second, 0.25);
}

TEST(RunModel, ASpeedupAboveTheReviewLineIsFlagged) {
  const RunModel run = Build({Case("op", 0, true), BenchItem("op", 3.0), BenchShape("op", 1, 4.0)});
  ASSERT_EQ(run.performance.review.size(), 1u);
  EXPECT_EQ(run.performance.review[0].rfind("op: 4.0", 0), 0u);
}

TEST(RunModel, TheTimeSplitNeedsTheRunsWallTime) {
  EXPECT_FALSE(Build({Case("op", 0, true)}).time_split.has_value());
  const json run_info = {{"ranks", 2},
                         {"timing", {{"run_wall_s", 1.0}, {"store_s", 0.1}, {"item_s", 1.5}}}};
  const RunModel run = Build({Case("op", 0, true), Case("op", 1, true)}, run_info);
  ASSERT_TRUE(run.time_split.has_value());
  const TimeSplit& t = *run.time_split;
  EXPECT_DOUBLE_EQ(t.rank_seconds, 2.0);
  EXPECT_DOUBLE_EQ(t.compile_s, 0.06);
  EXPECT_DOUBLE_EQ(t.executor_s, 0.2 - 0.12);  // the cases' wall time less what is timed inside
  EXPECT_DOUBLE_EQ(t.startup_s,
                   1.5 - 0.2 - 0.1);  // the items' time less the cases' and the store's
  EXPECT_DOUBLE_EQ(t.idle_s, 0.5);
  EXPECT_DOUBLE_EQ(t.idle_fraction, 0.25);
}

TEST(RunModel, CasesTheStopCutShortAreNotStartUp) {
  const json run_info = {
      {"ranks", 2},
      {"timing", {{"run_wall_s", 1.0}, {"store_s", 0.1}, {"item_s", 1.5}, {"stopped_s", 0.7}}}};
  const TimeSplit t = *Build({Case("op", 0, true), Case("op", 1, true)}, run_info).time_split;
  EXPECT_DOUBLE_EQ(t.stopped_s, 0.7);
  EXPECT_NEAR(t.startup_s, 1.5 - 0.2 - 0.1 - 0.7, 1e-12);
  EXPECT_DOUBLE_EQ(t.idle_s, 0.5);  // the cut-short cases were work, not idleness
}

TEST(RunModel, CompilationsAndWhatTheDiskCacheServedAddUpPerOperatorAndRun) {
  CaseRecord cold = Case("op", 0, true);  // 30 ms of compile (Case's), 2 kernels compiled
  cold.timings["kernels_compiled"] = 2;
  cold.timings["compile_cached_ms"] = 0.0;
  cold.timings["kernels_cached"] = 0;
  CaseRecord warm = Case("op", 1, true);  // both loaded from the cache
  warm.timings["kernels_compiled"] = 2;
  warm.timings["compile_cached_ms"] = 30.0;
  warm.timings["kernels_cached"] = 2;
  CaseRecord untold = Case("other", 0, true);  // no compile listener: hits unknown
  untold.timings["kernels_compiled"] = 1;
  const json run_info = {{"ranks", 1}, {"timing", {{"run_wall_s", 1.0}, {"item_s", 1.0}}}};
  const RunModel run = Build({cold, warm, untold}, run_info);
  const CaseTimings& op = Op(run, "op").spent;
  EXPECT_EQ(op.kernels_compiled, 4);
  EXPECT_DOUBLE_EQ(op.compile_ms, 60.0);
  ASSERT_TRUE(op.compile_cached_ms.has_value());
  EXPECT_DOUBLE_EQ(*op.compile_cached_ms, 30.0);
  EXPECT_EQ(op.kernels_cached, 2);
  EXPECT_FALSE(Op(run, "other").spent.compile_cached_ms.has_value());
  EXPECT_EQ(Op(run, "other").spent.kernels_compiled, 1);
  ASSERT_TRUE(run.time_split && run.time_split->compile_cached_s);
  EXPECT_DOUBLE_EQ(*run.time_split->compile_cached_s, 0.03);
  EXPECT_DOUBLE_EQ(run.time_split->compile_s, 0.09);
  // Without a case that could tell, the run says nothing of the cache.
  EXPECT_FALSE(Build({untold}, run_info).time_split->compile_cached_s.has_value());
}

TEST(RunModel, TheReproRunsTheTaskFileAloneUnlessAManifestSweptTheCases) {
  const json run_info = {{"backend", "cpu"}, {"manifest", "/jobs/j.json"}};
  CaseRecord swept = Case("swept", 0, false);
  swept.params = {{"n", 4}};
  const RunModel run =
      Build({Facts("alone", {{"task_file", "/ops/alone/task.py"},
                             {"impl_name", "cpu_impl"},
                             {"lint_enabled", false}}),
             Case("alone", 0, false), Facts("swept", {{"task_file", "/ops/swept/task.py"}}), swept},
            run_info);
  EXPECT_EQ(Op(run, "alone").repro,
            "opverify verify --op_name alone --verify_dir /ops/alone --triton_impl_name cpu_impl "
            "--backend cpu --no-lint");  // plain words need no quotes (ShellQuote)
  EXPECT_EQ(Op(run, "swept").repro,
            "opverify-batch /jobs/j.json --filter swept --run-dir /tmp/repro-swept");
  EXPECT_EQ(run.failures.at(0).repro, Op(run, "alone").repro);
}

TEST(RunModel, ThePlanNamesWhatTheStoreLacks) {
  const RunModel run =
      BuildRunModel({Facts("counted", {{"case_count", 3}}), Case("counted", 0, true),
                     Case("counted", 1, true), Case("swept", 0, true)},
                    {}, json::object(), "/runs/r",
                    RunPlan{{{"counted", 0}, {"swept", 2}, {"gone", 0}, {"gone_too", 5}}});
  EXPECT_EQ(run.incomplete,
            (std::vector<std::string>{
                "counted: 2 of 3 cases stored", "swept: 1 of 2 cases stored",
                "gone: no results stored (the run's plan has it)",
                "gone_too: no results stored (the run's plan has it, with 5 cases)"}));
  EXPECT_EQ(run.totals.lost, 4);
  // Without a plan nothing is known to be missing.
  EXPECT_TRUE(
      BuildRunModel({Case("counted", 0, true)}, {}, json::object(), "/r").incomplete.empty());
}

TEST(RunModel, TheRunFolderInfoAndProblemsAreKept) {
  const RunModel run =
      BuildRunModel({}, {"shards/rank-0001.h5: cannot open"}, {{"ranks", 3}}, "/runs/r1");
  EXPECT_EQ(run.run_dir, "/runs/r1");
  EXPECT_EQ(run.run_info.value("ranks", 0), 3);
  ASSERT_EQ(run.problems.size(), 1u);
  EXPECT_TRUE(run.operators.empty());
  EXPECT_EQ(run.performance.fast_p.at(0).second, 0.0);
}

TEST(RunVersionLine, NamesTheBuildThatRanTheRunOrNothing) {
  const auto line = [](const json& run_info) { return RunVersionLine(run_info.get<RunInfo>()); };
  EXPECT_EQ(line({{"opverify", {{"version", "0.1.0"}, {"commit", "abc1234"}}}}),
            "opverify 0.1.0 (abc1234)");
  EXPECT_EQ(line({{"opverify", {{"version", "0.1.0"}}}}), "opverify 0.1.0");
  EXPECT_EQ(line(json::object()), "");             // a run from before versions
  EXPECT_EQ(line({{"opverify", "garbled"}}), "");  // never throws on a bad file
  EXPECT_EQ(line({{"opverify", {{"version", 3}}}}), "");
}

}  // namespace
}  // namespace opverify
