#include "reduce/summary_json_reporter.h"

#include <filesystem>

#include "reduce/executor_starts.h"
#include "reduce/performance_gates.h"
#include "reduce/report_extras.h"
#include "reduce/report_file.h"
#include "reduce/skipped_cases.h"

namespace opverify {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

template <typename T>
ordered_json OrNull(const std::optional<T>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

ordered_json PerformanceJson(const PerformanceModel& p) {
  ordered_json out;
  out["operators_benchmarked"] = p.operators.size();
  out["geomean_speedup"] = OrNull(p.geomean_speedup);
  ordered_json by_dtype = ordered_json::object();
  for (const auto& [dtype, speed] : p.by_dtype) {
    by_dtype[dtype] = {{"shapes", speed.shapes},
                       {"geomean_speedup", OrNull(speed.geomean_speedup)}};
  }
  out["by_dtype"] = std::move(by_dtype);
  ordered_json fast = ordered_json::object();
  for (const auto& [label, share] : p.fast_p) fast[label] = share;
  out["fast_p"] = std::move(fast);
  out["operators_total"] = p.operators_total;
  out["operators_correct"] = p.operators_correct;
  out["review"] = p.review;
  ordered_json operators = ordered_json::array();
  for (const OperatorSpeed& op : p.operators) {
    operators.push_back({{"name", op.name},
                         {"shapes", op.shapes},
                         {"speedup", OrNull(op.speedup)},
                         {"framework_ms", OrNull(op.framework_ms)},
                         {"implementation_ms", OrNull(op.implementation_ms)}});
  }
  out["operators"] = std::move(operators);
  return out;
}

ordered_json TimeSplitJson(const TimeSplit& t) {
  ordered_json out = {{"rank_seconds", t.rank_seconds},
                      {"compile_s", t.compile_s},
                      {"construct_s", t.construct_s},
                      {"probe_s", t.probe_s},
                      {"golden_s", t.golden_s},
                      {"impl_s", t.impl_s},
                      {"judge_s", t.judge_s},
                      {"checks_s", t.checks_s},
                      {"executor_s", t.executor_s},
                      {"store_s", t.store_s},
                      {"ab_s", t.ab_s},
                      {"bench_s", t.bench_s},
                      {"startup_s", t.startup_s},
                      {"stopped_s", t.stopped_s},
                      {"idle_s", t.idle_s},
                      {"idle_fraction", t.idle_fraction}};
  if (t.compile_cached_s) out["compile_cached_s"] = *t.compile_cached_s;
  return out;
}

ordered_json OperatorRow(const OperatorModel& op) {
  ordered_json dtypes = ordered_json::object();
  for (const auto& [dtype, cell] : op.dtypes)
    dtypes[dtype] = {{"cases", cell.cases}, {"failed", cell.failed}};
  ordered_json row = {{"name", op.name},
                      {"cases", op.passed + op.waived + op.failed},
                      {"passed", op.passed},
                      {"waived", op.waived},
                      {"failed", op.failed},
                      {"error_types", op.error_types},
                      {"reference_suspect", op.reference_suspect},
                      {"wall_s", op.wall_s()},
                      {"dtypes", std::move(dtypes)},
                      {"max_rel_diff", OrNull(op.max_rel_diff)}};
  // Where its cases' time went (the run's time_split, for this operator's stored cases).
  const CaseTimings& spent = op.spent;
  row["phases"] = {{"construct_s", spent.construct_ms / 1e3}, {"probe_s", spent.probe_ms / 1e3},
                   {"compile_s", spent.compile_ms / 1e3},     {"golden_s", spent.golden_ms / 1e3},
                   {"impl_s", spent.impl_ms / 1e3},           {"judge_s", spent.judge_ms / 1e3},
                   {"checks_s", spent.checks_ms / 1e3}};
  // Triton's compilations in its cases, and what of them the disk cache served.
  if (spent.kernels_compiled > 0) {
    row["compile"] = {
        {"s", spent.compile_ms / 1e3},
        {"kernels", spent.kernels_compiled},
        {"from_cache_s", spent.compile_cached_ms ? ordered_json(*spent.compile_cached_ms / 1e3)
                                                 : ordered_json(nullptr)},
        {"kernels_from_cache", OrNull(spent.kernels_cached)}};
  }
  return row;
}

ordered_json FailureJson(const FailureRow& f) {
  ordered_json out = {
      {"case_id", f.case_id},   {"op", f.op},     {"error_type", f.error_type.text()},
      {"error_msg", f.message}, {"rank", f.rank}, {"stored_at", f.stored_at}};
  if (f.ab) out["ab"] = f.ab->ClassificationJson();
  if (f.ab && !f.ab->inherited_from.empty()) out["ab_inherited_from"] = f.ab->inherited_from;
  return out;
}

// A reference_suspect failure, in the summary's own list: why, and both judgements.
ordered_json SuspectJson(const FailureRow& f) {
  const ReferenceTrust* trust = f.Trust();
  // Each judgement whole, as stored.
  auto part = [&](const char* key) {
    return trust != nullptr && trust->stored.contains(key) ? trust->stored[key] : json(nullptr);
  };
  return {{"case_id", f.case_id},
          {"op", f.op},
          {"error_type", f.error_type.text()},
          {"reason", trust != nullptr ? trust->reason : ""},
          {"fp64", part("fp64")},
          {"device_reference", part("device_reference")}};
}

}  // namespace

Status SummaryJsonReporter::ReportRun(const RunModel& run) {
  ordered_json summary;
  summary["run_dir"] = run.run_dir;
  for (const auto& [key, value] : run.run_info.items()) summary[key] = value;
  summary["totals"] = {{"operators", run.totals.operators}, {"cases", run.totals.cases},
                       {"passed", run.totals.passed},       {"waived", run.totals.waived},
                       {"failed", run.totals.failed},       {"lost", run.totals.lost}};
  if (run.time_split) summary["time_split"] = TimeSplitJson(*run.time_split);
  if (std::optional<ordered_json> starts = ExecutorStartsJson(run))
    summary["executor_starts"] = std::move(*starts);
  summary["performance"] = PerformanceJson(run.performance);
  summary["error_types"] = run.error_types;
  summary["ab"] = run.ab;
  ordered_json operators = ordered_json::array();
  for (const OperatorModel& op : run.operators) operators.push_back(OperatorRow(op));
  summary["operators"] = std::move(operators);
  ordered_json failures = ordered_json::array();
  for (const FailureRow& f : run.failures) failures.push_back(FailureJson(f));
  summary["failures"] = std::move(failures);
  ordered_json suspects = ordered_json::array();
  for (const FailureRow& f : run.failures) {
    if (f.reference_suspect()) suspects.push_back(SuspectJson(f));
  }
  summary["reference_suspect"] = std::move(suspects);
  ordered_json waived = ordered_json::array();
  for (const WaivedRow& w : run.waived) {
    waived.push_back(
        {{"case_id", w.case_id}, {"op", w.op}, {"waivers", ordered_json::parse(w.waivers.dump())}});
  }
  summary["waived"] = std::move(waived);
  ordered_json allowances = ordered_json::array();
  for (const AllowanceUse& use : run.allowances) allowances.push_back(AllowanceUseJson(use));
  summary["allow_torch"] = std::move(allowances);
  // What the run meant to run and did not reach (a stop signal, --maxfail).
  ordered_json not_run = ordered_json::array();
  for (const SkippedCase& skipped : run.skipped) {
    if (IsNotRun(skipped))
      not_run.push_back(
          {{"case_id", skipped.case_id}, {"op", skipped.op}, {"reason", skipped.reason}});
  }
  summary["not_run"] = std::move(not_run);
  summary["problems"] = run.problems;
  summary["incomplete"] = run.incomplete;
  if (const ReportExtras* extras = context().extras; extras != nullptr) {
    if (extras->trend) summary["history"] = extras->trend->ToJson();
    if (extras->references || extras->baseline)
      summary["performance_gates"] = PerformanceGatesJson(*extras);
  }
  return WriteReportJson((std::filesystem::path(context().run_dir) / "summary.json").string(),
                         summary);
}

}  // namespace opverify
