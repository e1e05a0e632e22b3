#include "reduce/run_report.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <filesystem>
#include <fstream>
#include <map>

#include "reduce/html_report.h"
#include "reduce/report_file.h"
#include "reduce/text_escape.h"
#include "reduce/junit.h"
#include "reduce/precision_report.h"
#include "runner/bench/operator_bench.h"
#include "runner/bench/perf_result.h"
#include "runner/store/run_records.h"
#include "runner/verify/verify_result.h"
#include "runner/common/utf8.h"

namespace fs = std::filesystem;

namespace opverify {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

Status WriteJson(const fs::path& path, const ordered_json& value) {
  return WriteReportFile(path.string(), value.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

struct OperatorCases {
  std::vector<const CaseRecord*> cases;  // sorted by case index
  json facts = json::object();           // environment, lint, non_compute, impl_name
  std::vector<const CaseRecord*> bench_shapes;  // the performance phase's measured shapes
  std::vector<const CaseRecord*> bench_items;   // its settings, clock and environment, per item
};

// The performance phase's part of summary.json: per operator, per dtype and
// overall geometric means, fast_p, and what to review.
struct PerformanceTotals {
  ordered_json operators = ordered_json::array();
  std::map<std::string, std::vector<double>> by_dtype;  // valid shape speedups
  std::vector<double> operator_speedups;
  std::vector<std::string> review;
  int correct_operators = 0;
  int all_operators = 0;
};

// Writes ops/<op>/perf_result.json from the stored shapes of an operator
// whose every case passed; adds it to the totals.
Status WritePerfResult(const fs::path& run_dir, const std::string& name, const OperatorCases& op, bool all_passed,
                       PerformanceTotals* totals) {
  totals->all_operators += 1;
  totals->correct_operators += all_passed ? 1 : 0;
  if (!all_passed || op.bench_shapes.empty()) return Status::Ok();
  OperatorBenchResult result;
  result.op_name = name;
  std::map<int, ShapeResult> shapes;  // by case index: one per shape, the latest stored
  for (const CaseRecord* r : op.bench_shapes) {
    ShapeResult shape = ShapeResultFromJson(r->extra.value("shape", json::object()));
    shapes[shape.case_idx] = std::move(shape);
  }
  for (auto& [index, shape] : shapes) result.shapes.push_back(std::move(shape));
  BenchSettings settings;
  json clocks = json::array();
  for (const CaseRecord* item : op.bench_items) {
    settings = BenchSettings::FromJson(item->extra.value("settings", json::object()));
    if (result.environment.is_null()) result.environment = item->extra.value("environment", json());
    clocks.push_back(item->extra.value("clock", json()));
    result.wall_s += item->extra.value("wall_s", 0.0);
  }
  // One clock record per work item that benchmarked a part of the operator.
  result.clock = clocks.size() == 1 ? clocks[0] : clocks;
  const int expected = static_cast<int>(op.cases.size());
  if (static_cast<int>(result.shapes.size()) < expected) {
    result.warnings.push_back(std::to_string(expected - static_cast<int>(result.shapes.size())) + " of " +
                              std::to_string(expected) +
                              " shapes have no stored benchmark (a rank stopped between verifying and benchmarking them)");
  }
  ordered_json perf = PerfResultJson(result, settings);
  Status written = WriteJson(run_dir / "ops" / name / "perf_result.json", perf);
  if (!written.ok()) return written;

  ordered_json entry = {{"name", name}, {"shapes", result.shapes.size()},
                        {"speedup", perf["speedup_vs_torch"]},
                        {"framework_ms", perf["framework"]["avg_latency_ms"]},
                        {"implementation_ms", perf["implementation"]["avg_latency_ms"]}};
  const json& speedup = perf["speedup_vs_torch"];
  if (speedup.is_number()) {
    totals->operator_speedups.push_back(speedup.get<double>());
    if (speedup.get<double>() > settings.review_speedup) {
      totals->review.push_back(name + ": " + std::to_string(speedup.get<double>()) + "x");
    }
  }
  for (const ShapeResult& shape : result.shapes) {
    if (shape.above_roofline) {
      totals->review.push_back(name + " shape " + std::to_string(shape.case_idx) +
                               ": faster than the device's memory roofline");
    }
  }
  for (const ShapeResult& shape : result.shapes) {
    if (!shape.passed || !shape.speedup || !std::isfinite(*shape.speedup) || *shape.speedup <= 0) continue;
    const std::string dtype = shape.input_dtypes.empty() ? "none" : shape.input_dtypes.front();
    totals->by_dtype[dtype].push_back(*shape.speedup);
  }
  totals->operators.push_back(std::move(entry));
  return Status::Ok();
}

ordered_json PerformanceSummary(PerformanceTotals& totals) {
  ordered_json out;
  const std::optional<double> overall = GeometricMean(totals.operator_speedups);
  out["operators_benchmarked"] = totals.operators.size();
  out["geomean_speedup"] = overall ? ordered_json(*overall) : ordered_json(nullptr);
  ordered_json by_dtype = ordered_json::object();
  for (const auto& [dtype, speedups] : totals.by_dtype) {
    const std::optional<double> mean = GeometricMean(speedups);
    by_dtype[dtype] = {{"shapes", speedups.size()}, {"geomean_speedup", mean ? ordered_json(*mean) : ordered_json(nullptr)}};
  }
  out["by_dtype"] = std::move(by_dtype);
  // fast_p: the share of all operators that are correct and faster than p x the framework.
  ordered_json fast = ordered_json::object();
  for (const auto& [label, p] : {std::pair<const char*, double>{"1.0", 1.0}, {"1.5", 1.5}, {"2.0", 2.0}}) {
    int count = 0;
    for (double s : totals.operator_speedups) count += s > p ? 1 : 0;
    fast[label] = totals.all_operators > 0 ? static_cast<double>(count) / totals.all_operators : 0.0;
  }
  out["fast_p"] = std::move(fast);
  out["operators_total"] = totals.all_operators;
  out["operators_correct"] = totals.correct_operators;
  out["review"] = totals.review;
  out["operators"] = std::move(totals.operators);
  return out;
}


// The dtype a case is filed under: its first tensor input's ("float16"), else "none".
std::string CaseDtype(const CaseRecord& c) {
  for (const auto& input : c.input_desc) {
    if (!input.is_object()) continue;
    std::string dtype = input.value("dtype", "");
    if (input.contains("items") && input["items"].is_array() && !input["items"].empty() &&
        input["items"][0].is_object()) {  // a list of tensors: its first one's
      dtype = input["items"][0].value("dtype", "");
    }
    if (dtype.empty()) continue;
    return dtype.rfind("torch.", 0) == 0 ? dtype.substr(6) : dtype;
  }
  return "none";
}

// dtype -> {cases, failed}: the report's pass/fail grid.
ordered_json DtypeGrid(const std::vector<const CaseRecord*>& cases) {
  std::map<std::string, std::pair<int, int>> grid;
  for (const CaseRecord* c : cases) {
    auto& cell = grid[CaseDtype(*c)];
    cell.first += 1;
    cell.second += c->passed ? 0 : 1;
  }
  ordered_json out = ordered_json::object();
  for (const auto& [dtype, cell] : grid) out[dtype] = {{"cases", cell.first}, {"failed", cell.second}};
  return out;
}

// The largest relative difference any judged output of the operator had (null when none was judged).
ordered_json WorstRelativeDiff(const std::vector<const CaseRecord*>& cases) {
  std::optional<double> worst;
  for (const CaseRecord* c : cases) {
    for (const auto& output : c->outputs) {
      if (!output.is_object() || !output.contains("metrics")) continue;
      const json& m = output["metrics"];
      if (m.contains("max_rel_diff") && m["max_rel_diff"].is_number()) {
        worst = std::max(worst.value_or(0.0), m["max_rel_diff"].get<double>());
      }
    }
  }
  return worst ? ordered_json(*worst) : ordered_json(nullptr);
}

// A command that runs the operator again by itself: `opverify verify` where
// its cases are the task file's own, the batch on its manifest filtered to
// it where a manifest sweep made them.
std::string ReproCommand(const std::string& name, const OperatorCases& op, const json& run_info) {
  const std::string task_file = op.facts.value("task_file", "");
  const bool swept = std::any_of(op.cases.begin(), op.cases.end(), [](const CaseRecord* c) {
    return c->params.is_object() && !c->params.empty();
  });
  if (!task_file.empty() && !swept) {
    std::string command = "opverify verify --op_name '" + name + "' --verify_dir '" +
                          fs::path(task_file).parent_path().string() + "' --triton_impl_name '" +
                          op.facts.value("impl_name", std::string("triton_ascend_impl")) + "'";
    if (run_info.value("backend", std::string("auto")) != "auto") command += " --backend " + run_info["backend"].get<std::string>();
    if (!op.facts.value("lint_enabled", true)) command += " --no-lint";
    return command;
  }
  return "opverify-batch '" + run_info.value("manifest", std::string("JOBS.json")) + "' --filter '" + name +
         "' --run-dir /tmp/repro-" + name;
}

// A number with `decimals` decimals and a suffix ("1.53x"), or "-" when there is none.
std::string Number(const json& value, int decimals, const char* suffix = "") {
  if (!value.is_number()) return "-";
  std::ostringstream text;
  text << std::fixed << std::setprecision(decimals) << value.get<double>() << suffix;
  return text.str();
}

Status WriteReportMarkdown(const fs::path& path, const ordered_json& summary,
                           const std::map<std::string, std::string>& repro) {
  std::ostringstream md;
  const auto& totals = summary["totals"];
  md << "# opverify run\n\n";
  md << "- run folder: `" << summary.value("run_dir", "") << "`\n";
  if (summary.contains("manifest")) md << "- manifest: `" << summary["manifest"].get<std::string>() << "`\n";
  md << "- operators: " << totals["operators"] << ", cases: " << totals["cases"] << ", passed: " << totals["passed"]
     << ", failed: " << totals["failed"] << "\n\n";
  md << "## Operators\n\n| operator | cases | passed | failed | errors | speedup |\n|---|---|---|---|---|---|\n";
  std::map<std::string, json> speedups;
  if (summary.contains("performance")) {
    for (const auto& op : summary["performance"]["operators"]) speedups[op.value("name", "")] = op["speedup"];
  }
  for (const auto& op : summary["operators"]) {
    const std::string name = op.value("name", "");
    std::string errors;
    for (const auto& [type, count] : op["error_types"].items()) errors += type + " " + count.dump() + " ";
    md << "| " << MarkdownCell(name, 200) << " | " << op["cases"] << " | " << op["passed"] << " | " << op["failed"] << " | "
       << MarkdownCell(errors, 200) << " | " << (speedups.count(name) ? Number(speedups[name], 2, "x") : "-") << " |\n";
  }
  if (summary.contains("performance")) {
    const auto& p = summary["performance"];
    md << "\n## Performance\n\n- geometric mean speedup: " << Number(p["geomean_speedup"], 3, "x") << "\n";
    for (const auto& [label, share] : p["fast_p"].items()) md << "- fast_" << label << ": " << Number(share, 2) << "\n";
    for (const auto& [dtype, entry] : p["by_dtype"].items()) {
      md << "- " << dtype << ": " << Number(entry["geomean_speedup"], 3, "x") << " over " << entry["shapes"] << " shapes\n";
    }
    for (const auto& r : p["review"]) md << "- review: " << MarkdownCell(r.get<std::string>(), 200) << "\n";
  }
  if (!summary["failures"].empty()) {
    md << "\n## Failures\n\n| case | error | A/B | message |\n|---|---|---|---|\n";
    for (const auto& f : summary["failures"]) {
      md << "| " << MarkdownCell(f.value("case_id", ""), 200) << " | " << MarkdownCell(f.value("error_type", ""), 200) << " | "
         << (f.contains("ab") && f["ab"].is_string() ? f["ab"].get<std::string>() : "-") << " | "
         << MarkdownCell(f.value("error_msg", ""), 200) << " |\n";
    }
    md << "\nTo run a failing operator again by itself:\n\n";
    std::map<std::string, bool> shown;
    for (const auto& f : summary["failures"]) {
      const std::string op = f.value("op", "");
      if (shown[op] || repro.count(op) == 0) continue;
      shown[op] = true;
      md << "```sh\n" << repro.at(op) << "\n```\n";
    }
  }
  return WriteReportFile(path.string(), md.str());
}

}  // namespace

Result<RunTotals> WriteRunReports(const std::string& run_dir, const json& run_info) {
  std::vector<std::string> problems;
  Result<std::vector<CaseRecord>> records = ReadRunRecords(run_dir, &problems);
  if (!records.ok()) return records.status();
  std::map<std::string, OperatorCases> ops;
  for (const CaseRecord& r : records.value()) {
    OperatorCases& op = ops[r.op_name];
    switch (r.kind) {
      case RecordKind::kOperator:
        for (auto& [key, value] : r.extra.items()) op.facts[key] = value;
        break;
      case RecordKind::kBenchShape:
        op.bench_shapes.push_back(&r);
        break;
      case RecordKind::kBenchItem:
        op.bench_items.push_back(&r);
        break;
      case RecordKind::kCase:
        op.cases.push_back(&r);
        break;
    }
  }
  RunTotals totals;
  ordered_json operators = ordered_json::array();
  ordered_json failures = ordered_json::array();
  std::map<std::string, int> by_error;
  std::map<std::string, int> by_ab;
  std::map<std::string, double> spent_ms;  // summed per-case timings
  PerformanceTotals performance;
  for (auto& [name, op] : ops) {
    std::sort(op.cases.begin(), op.cases.end(),
              [](const CaseRecord* a, const CaseRecord* b) { return a->case_index < b->case_index; });
    SeedResultParts parts;
    parts.op_name = name;
    parts.total_cases = static_cast<int>(op.cases.size());
    double wall_ms = 0;
    std::map<std::string, int> op_errors;
    for (const CaseRecord* c : op.cases) {
      parts.passed_cases += c->passed ? 1 : 0;
      if (c->extra.contains("details")) parts.details.push_back(ordered_json::parse(c->extra["details"].dump()));
      wall_ms += c->timings.value("wall_ms", 0.0);
      for (const char* key : {"construct_ms", "probe_ms", "compile_ms", "golden_ms", "impl_ms", "judge_ms", "wall_ms"}) {
        spent_ms[key] += c->timings.value(key, 0.0);
      }
      if (c->passed) continue;
      if (c->extra.contains("failure")) parts.failures.push_back(ordered_json::parse(c->extra["failure"].dump()));
      op_errors[c->error_type]++;
      by_error[c->error_type]++;
      ordered_json failure = {{"case_id", c->case_id}, {"op", name}, {"error_type", c->error_type},
                              {"error_msg", Utf8Prefix(c->error_msg, 300)}, {"rank", c->rank},
                              {"stored_at", c->stored_at}};
      if (c->ab.is_object()) {
        failure["ab"] = c->ab.value("classification", json(nullptr));
        by_ab[c->ab.value("classification", std::string("none"))]++;
      }
      failures.push_back(std::move(failure));
    }
    parts.environment = op.facts.value("environment", json(nullptr));
    parts.lint = op.facts.value("lint", json(nullptr));
    parts.non_compute = op.facts.value("non_compute", false);
    if (op.facts.contains("non_compute_given") && op.facts["non_compute_given"].is_boolean()) {
      parts.non_compute_given = op.facts["non_compute_given"].get<bool>();
    }
    VerifyContext context;
    context.impl_name = op.facts.value("impl_name", "");
    Status written = WriteJson(fs::path(run_dir) / "ops" / name / "verify_result.json",
                               SeedVerifyResult(parts, context));
    if (!written.ok()) return written;
    const bool all_passed = parts.total_cases > 0 && parts.passed_cases == parts.total_cases &&
                            parts.total_cases >= op.facts.value("case_count", 0);
    written = WritePerfResult(run_dir, name, op, all_passed, &performance);
    if (!written.ok()) return written;
    written = WritePrecisionReport((fs::path(run_dir) / "ops" / name / "precision_report.md").string(), name,
                                   op.cases, op.facts);
    if (!written.ok()) return written;
    totals.operators += 1;
    totals.cases += parts.total_cases;
    totals.passed += parts.passed_cases;
    operators.push_back({{"name", name}, {"cases", parts.total_cases}, {"passed", parts.passed_cases},
                         {"failed", parts.total_cases - parts.passed_cases}, {"error_types", op_errors},
                         {"wall_s", wall_ms / 1e3}, {"dtypes", DtypeGrid(op.cases)},
                         {"max_rel_diff", WorstRelativeDiff(op.cases)}});
  }
  totals.failed = totals.cases - totals.passed;
  ordered_json summary;
  summary["run_dir"] = fs::absolute(run_dir).string();
  for (auto& [key, value] : run_info.items()) summary[key] = value;
  summary["totals"] = {{"operators", totals.operators}, {"cases", totals.cases}, {"passed", totals.passed},
                       {"failed", totals.failed}};
  // Where the ranks' time went. "compile" is Triton's compilation (the
  // first launch of each kernel specialisation in an executor, timed by the
  // executor's compile clock) and is not in construct, probe or impl;
  // "probe" is the hidden-state probe before a first case; "executor" is the rest of a
  // case's wall time (requests, tensor hand-over, restarts after a failure);
  // "startup" is per work item: starting an executor, importing torch and
  // the operator, the lint; idle is what remains of ranks x run wall time
  // (waiting for work, the last ranks finishing).
  if (run_info.contains("timing") && run_info["timing"].contains("run_wall_s")) {
    const json& t = run_info["timing"];
    const double ranks = run_info.value("ranks", 1);
    const double capacity = ranks * t["run_wall_s"].get<double>();
    const double cases_s = spent_ms["wall_ms"] / 1e3;
    const double judged_s = (spent_ms["construct_ms"] + spent_ms["probe_ms"] + spent_ms["compile_ms"] +
                             spent_ms["golden_ms"] + spent_ms["impl_ms"] + spent_ms["judge_ms"]) / 1e3;
    const double store_s = t.value("store_s", 0.0), ab_s = t.value("ab_s", 0.0), bench_s = t.value("bench_s", 0.0);
    const double items_s = t.value("item_s", cases_s + store_s + ab_s);
    const double idle_s = std::max(0.0, capacity - items_s);
    summary["time_split"] = {{"rank_seconds", capacity},
                             {"compile_s", spent_ms["compile_ms"] / 1e3},
                             {"construct_s", spent_ms["construct_ms"] / 1e3},
                             {"probe_s", spent_ms["probe_ms"] / 1e3},
                             {"golden_s", spent_ms["golden_ms"] / 1e3},
                             {"impl_s", spent_ms["impl_ms"] / 1e3},
                             {"judge_s", spent_ms["judge_ms"] / 1e3},
                             {"executor_s", std::max(0.0, cases_s - judged_s)},
                             {"store_s", store_s},
                             {"ab_s", ab_s},
                             {"bench_s", bench_s},
                             {"startup_s", std::max(0.0, items_s - cases_s - store_s - ab_s - bench_s)},
                             {"idle_s", idle_s},
                             {"idle_fraction", capacity > 0 ? idle_s / capacity : 0.0}};
  }
  summary["performance"] = PerformanceSummary(performance);
  summary["error_types"] = by_error;
  summary["ab"] = by_ab;
  summary["operators"] = std::move(operators);
  summary["failures"] = std::move(failures);
  summary["problems"] = problems;
  Status written = WriteJson(fs::path(run_dir) / "summary.json", summary);
  if (!written.ok()) return written;

  JUnitInput junit;
  junit.run_name = run_info.value("manifest_name", std::string("opverify"));
  for (const auto& [name, op] : ops) {
    junit.operators[name] = op.cases;
    junit.repro[name] = ReproCommand(name, op, run_info);
  }
  written = WriteJUnit((fs::path(run_dir) / "junit.xml").string(), junit);
  if (!written.ok()) return written;
  written = WriteReportMarkdown(fs::path(run_dir) / "report.md", summary, junit.repro);
  if (!written.ok()) return written;
  written = WriteHtmlReport((fs::path(run_dir) / "report.html").string(), summary, junit.repro);
  if (!written.ok()) return written;
  return totals;
}

}  // namespace opverify
