#include "reduce/run_model.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

#include "runner/cases/selection.h"
#include "runner/common/file_name.h"
#include "runner/common/sha256.h"
#include "runner/common/shell_quote.h"
#include "runner/common/utf8.h"
#include "runner/results/perf_result.h"

namespace opverify {
namespace {

using nlohmann::json;

// An operator's stored records, sorted by what they are.
struct OperatorRecords {
  std::vector<CaseRecord> cases;
  json facts = json::object();                  // its operator records' extras, merged
  std::vector<const CaseRecord*> bench_shapes;  // the performance phase's measured shapes
  std::vector<const CaseRecord*> bench_items;  // its settings, clock and environment, per work item
};

// Files a record under its operator by its kind: the operator's facts, a
// benchmarked shape, a benchmark work item, or a case. The one
// place that decodes a record's kind.
void FileRecord(CaseRecord& r, OperatorRecords* op) {
  switch (r.kind) {
    case RecordKind::kOperator:
      for (auto& [key, value] : r.extra.items()) {
        // Each work item of a split sweep names the cases it left out.
        if (key == "left_out" && op->facts.contains(key) && value.is_object()) {
          op->facts[key].update(value);
        } else {
          op->facts[key] = value;
        }
      }
      break;
    case RecordKind::kBenchShape:
      op->bench_shapes.push_back(&r);
      break;
    case RecordKind::kBenchItem:
      op->bench_items.push_back(&r);
      break;
    case RecordKind::kCase:
      op->cases.push_back(std::move(r));
      break;
  }
}

// The dtype a case is filed under: its first tensor input's ("float16"), else "none".
std::string GridDtype(const CaseRecord& c) {
  const std::string dtype = CaseDtype(nullptr, c.input_desc);
  return dtype.empty() ? "none" : dtype;
}

// The largest relative difference any judged output had.
std::optional<double> WorstRelativeDiff(const std::vector<CaseModel>& cases) {
  std::optional<double> worst;
  for (const CaseModel& c : cases) {
    for (const OutputVerdict& output : c.content.outputs) {
      if (output.metrics && output.metrics->max_rel_diff) {
        worst = std::max(worst.value_or(0.0), *output.metrics->max_rel_diff);
      }
    }
  }
  return worst;
}

// `name` as an fnmatch(3) pattern that matches only itself (--filter is a glob).
std::string GlobLiteral(const std::string& name) {
  std::string pattern;
  for (char c : name) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') pattern += '\\';
    pattern += c;
  }
  return pattern;
}

// A command that runs the operator again by itself: `opverify verify` where
// its cases are the task file's own, the batch on its manifest filtered to
// it where a manifest sweep made them. Every word is shell-quoted: names and
// folders are data, whatever they hold.
std::string ReproCommand(const std::string& name, const OperatorFacts& facts,
                         const std::vector<CaseRecord>& cases, const RunInfo& info) {
  const std::string& task_file = facts.task_file;
  const bool swept = std::any_of(cases.begin(), cases.end(), [](const CaseRecord& c) {
    return c.params.is_object() && !c.params.empty();
  });
  if (!task_file.empty() && !swept) {
    std::vector<std::string> words = {
        "opverify",           "verify",
        "--op_name",          name,
        "--verify_dir",       std::filesystem::path(task_file).parent_path().string(),
        "--triton_impl_name", facts.impl_name.value_or("triton_ascend_impl")};
    const std::string backend = info.backend.value_or("auto");
    if (backend != "auto") words.insert(words.end(), {"--backend", backend});
    if (!facts.lint_enabled) words.push_back("--no-lint");
    return ShellCommand(words);
  }
  return ShellCommand({"opverify-batch", info.manifest.value_or("JOBS.json"), "--filter",
                       GlobLiteral(name), "--run-dir", "/tmp/repro-" + OperatorFolder(name)});
}

std::optional<double> NumberOrNone(const nlohmann::ordered_json& value) {
  return value.is_number() ? std::optional<double>(value.get<double>()) : std::nullopt;
}

// The operator's performance from its stored shapes and work items, of its `cases` cases.
OperatorPerformance BuildPerformance(const std::string& name, const OperatorRecords& op,
                                     int cases) {
  OperatorPerformance perf;
  OperatorBenchResult& result = perf.result;
  result.op_name = name;
  std::map<int, ShapeResult> shapes;  // by case index: one per shape, the latest stored
  for (const CaseRecord* r : op.bench_shapes) {
    ShapeResult shape = r->extra.get<BenchShapeFacts>().shape;
    shapes[shape.case_idx] = std::move(shape);
  }
  for (auto& [index, shape] : shapes) result.shapes.push_back(std::move(shape));
  json clocks = json::array();
  for (const CaseRecord* r : op.bench_items) {
    BenchItemFacts item = r->extra.get<BenchItemFacts>();
    perf.settings = std::move(item.settings);
    if (result.environment.is_null()) result.environment = std::move(item.environment);
    clocks.push_back(std::move(item.clock));
    result.wall_s += item.wall_s;
  }
  // One clock record per work item that benchmarked a part of the operator.
  result.clock = clocks.size() == 1 ? clocks[0] : clocks;
  const int expected = cases;
  if (static_cast<int>(result.shapes.size()) < expected) {
    result.warnings.push_back(std::to_string(expected - static_cast<int>(result.shapes.size())) +
                              " of " + std::to_string(expected) +
                              " shapes have no stored benchmark (a rank stopped between verifying "
                              "and benchmarking them)");
  }
  // perf_result.json's own numbers, so that the summary says what it says.
  const nlohmann::ordered_json file = PerfResultJson(result, perf.settings);
  perf.speedup = NumberOrNone(file["speedup_vs_torch"]);
  perf.framework_ms = NumberOrNone(file["framework"]["avg_latency_ms"]);
  perf.implementation_ms = NumberOrNone(file["implementation"]["avg_latency_ms"]);
  return perf;
}

// Adds a benchmarked operator to the run's performance totals.
void AddPerformance(const std::string& name, const OperatorPerformance& perf,
                    PerformanceModel* totals,
                    std::map<std::string, std::vector<double>>* dtype_speedups,
                    std::vector<double>* speedups) {
  totals->operators.push_back({name, static_cast<int>(perf.result.shapes.size()), perf.speedup,
                               perf.framework_ms, perf.implementation_ms});
  if (perf.speedup) {
    speedups->push_back(*perf.speedup);
    if (*perf.speedup > perf.settings.review_speedup) {
      totals->review.push_back(name + ": " + std::to_string(*perf.speedup) + "x");
    }
  }
  for (const ShapeResult& shape : perf.result.shapes) {
    if (shape.above_roofline) {
      totals->review.push_back(name + " shape " + std::to_string(shape.case_idx) +
                               ": faster than the device's memory roofline");
    }
  }
  for (const ShapeResult& shape : perf.result.shapes) {
    if (!shape.passed || !shape.speedup || !std::isfinite(*shape.speedup) || *shape.speedup <= 0)
      continue;
    const std::string dtype = shape.input_dtypes.empty() ? "none" : shape.input_dtypes.front();
    (*dtype_speedups)[dtype].push_back(*shape.speedup);
  }
}

// The geometric means and fast_p over the benchmarked operators.
void FinishPerformance(const std::map<std::string, std::vector<double>>& dtype_speedups,
                       const std::vector<double>& speedups, PerformanceModel* totals) {
  totals->geomean_speedup = GeometricMean(speedups);
  for (const auto& [dtype, values] : dtype_speedups) {
    totals->by_dtype[dtype] = {static_cast<int>(values.size()), GeometricMean(values)};
  }
  for (const auto& [label, p] :
       {std::pair<const char*, double>{"1.0", 1.0}, {"1.5", 1.5}, {"2.0", 2.0}}) {
    int count = 0;
    for (double s : speedups) count += s > p ? 1 : 0;
    totals->fast_p.emplace_back(label, totals->operators_total > 0
                                           ? static_cast<double>(count) / totals->operators_total
                                           : 0.0);
  }
}

// Summed per-case timings (milliseconds).
using SpentMs = CaseTimings;

void AddSpent(const CaseTimings& c, SpentMs* spent) {
  spent->construct_ms += c.construct_ms;
  spent->probe_ms += c.probe_ms;
  spent->compile_ms += c.compile_ms;
  spent->golden_ms += c.golden_ms;
  spent->impl_ms += c.impl_ms;
  spent->judge_ms += c.judge_ms;
  spent->checks_ms += c.checks_ms;
  spent->wall_ms += c.wall_ms;
  spent->kernels_compiled += c.kernels_compiled;
  if (c.compile_cached_ms) {
    spent->compile_cached_ms = spent->compile_cached_ms.value_or(0) + *c.compile_cached_ms;
    spent->kernels_cached = spent->kernels_cached.value_or(0) + c.kernels_cached.value_or(0);
  }
}

std::optional<TimeSplit> BuildTimeSplit(const RunInfo& info, const SpentMs& spent_ms) {
  if (!info.timing || !info.timing->run_wall_s) return std::nullopt;
  const RunTiming& t = *info.timing;
  const double ranks = info.ranks.value_or(1);
  TimeSplit split;
  split.rank_seconds = ranks * *t.run_wall_s;
  const double cases_s = spent_ms.wall_ms / 1e3;
  const double judged_s = (spent_ms.construct_ms + spent_ms.probe_ms + spent_ms.compile_ms +
                           spent_ms.golden_ms + spent_ms.impl_ms + spent_ms.judge_ms +
                           spent_ms.checks_ms) /
                          1e3;
  split.store_s = t.store_s;
  split.ab_s = t.ab_s;
  split.bench_s = t.bench_s;
  const double items_s = t.item_s.value_or(cases_s + split.store_s + split.ab_s);
  split.idle_s = std::max(0.0, split.rank_seconds - items_s);
  split.compile_s = spent_ms.compile_ms / 1e3;
  if (spent_ms.compile_cached_ms) split.compile_cached_s = *spent_ms.compile_cached_ms / 1e3;
  split.construct_s = spent_ms.construct_ms / 1e3;
  split.probe_s = spent_ms.probe_ms / 1e3;
  split.golden_s = spent_ms.golden_ms / 1e3;
  split.impl_s = spent_ms.impl_ms / 1e3;
  split.judge_s = spent_ms.judge_ms / 1e3;
  split.checks_s = spent_ms.checks_ms / 1e3;
  split.executor_s = std::max(0.0, cases_s - judged_s);
  split.stopped_s = t.stopped_s;
  split.startup_s = std::max(
      0.0, items_s - cases_s - split.store_s - split.ab_s - split.bench_s - split.stopped_s);
  split.idle_fraction = split.rank_seconds > 0 ? split.idle_s / split.rank_seconds : 0.0;
  return split;
}

FailureRow Failure(const CaseModel& c, const std::string& repro) {
  return {c.case_id, c.op_name,   c.content.error_type, Utf8Prefix(c.error_msg, 300),
          c.rank,    c.stored_at, c.content.ab,         repro};
}

}  // namespace

// The cases the selection left out of an operator once its task was loaded
// (the operator record's `left_out`): planned, but not to be stored.
int LeftOutCount(const OperatorFacts& facts) { return static_cast<int>(facts.left_out.size()); }

std::vector<std::string> MissingFromPlan(const RunModel& run, const RunPlan& plan) {
  std::map<std::string, const OperatorModel*> by_name;
  for (const OperatorModel& op : run.operators) by_name[op.name] = &op;
  std::vector<std::string> missing;
  for (const PlannedOperator& planned : plan.operators) {
    const auto found = by_name.find(planned.name);
    if (found == by_name.end()) {
      const auto only_facts = run.facts_without_cases.find(planned.name);
      if (only_facts != run.facts_without_cases.end() &&
          LeftOutCount(only_facts->second) >= planned.min_cases)
        continue;  // every case of it left out by the selection
      missing.push_back(planned.name + ": no results stored (the run's plan has it" +
                        (planned.min_cases > 0
                             ? ", with " + std::to_string(planned.min_cases) + " cases)"
                             : ")"));
      continue;
    }
    const OperatorModel& op = *found->second;
    const int expected =
        std::max({planned.min_cases, op.facts.case_count.value_or(0), 1}) - LeftOutCount(op.facts);
    const int stored = static_cast<int>(op.cases.size());
    if (stored < expected) {
      missing.push_back(planned.name + ": " + std::to_string(stored) + " of " +
                        std::to_string(expected) + " cases stored");
    }
  }
  return missing;
}

namespace {

// What the operators add up to while the run's model is built.
struct RunSums {
  SpentMs spent_ms;                                           // summed case timings
  std::vector<OperatorAllowances> allowances;                 // every operator's
  std::map<std::string, std::vector<double>> dtype_speedups;  // valid shape speedups
  std::vector<double> speedups;                               // benchmarked operators'
};

// The allowances an operator declared, and whether they were checked.
OperatorAllowances DeclaredAllowances(const std::string& name, const OperatorFacts& facts) {
  return {name, facts.allow_torch, facts.allow_torch_checked, {}};
}

// Counts case `c` into its operator and the run: its verdict, waivers,
// timings (the operator's; the run sums the operators'), dtype cell, and its
// failure row if it failed.
void CountCase(const CaseModel& c, OperatorModel* op, OperatorAllowances* allowances,
               RunModel* run) {
  op->passed += c.passed && !c.waived ? 1 : 0;
  op->waived += c.waived ? 1 : 0;
  const json& waivers = c.content.waivers;
  allowances->case_waivers.push_back(waivers);
  if (c.waived) run->waived.push_back({c.case_id, c.op_name, waivers});
  AddSpent(c.content.timings, &op->spent);
  DtypeCell& cell = op->dtypes[GridDtype(c)];
  cell.cases += 1;
  cell.failed += c.passed ? 0 : 1;
  if (c.passed) return;
  op->error_types[c.error_type]++;
  run->error_types[c.error_type]++;
  FailureRow failure = Failure(c, op->repro);
  if (failure.ab) run->ab[failure.AbClass().value_or("none")]++;
  op->reference_suspect += failure.reference_suspect() ? 1 : 0;
  run->failures.push_back(std::move(failure));
}

// A chunked operator's case whose A/B ran in another chunk (its class left
// unset, the case it inherits from named): that case's class and reference
// trust, now that every chunk's cases are here. A case named may itself
// inherit: the chain is followed to the case that ran the A/B.
void TakeClassesFromOtherChunks(std::vector<CaseModel>* cases) {
  std::map<std::string, const AbRecord*> by_id;
  for (const CaseModel& c : *cases) {
    if (c.content.ab) by_id[c.case_id] = &*c.content.ab;
  }
  std::vector<std::pair<AbRecord*, const AbRecord*>> found;  // filled after the walk
  for (CaseModel& c : *cases) {
    std::optional<AbRecord>& ab = c.content.ab;
    if (!ab || ab->classification || ab->inherited_from.empty()) continue;
    const AbRecord* origin = nullptr;
    std::string next = ab->inherited_from;
    for (std::size_t hops = 0; hops <= cases->size() && !next.empty(); ++hops) {
      const auto from = by_id.find(next);
      if (from == by_id.end()) break;
      origin = from->second;
      next = origin->classification ? "" : origin->inherited_from;
    }
    if (origin != nullptr && origin->classification) found.emplace_back(&*ab, origin);
  }
  for (auto& [ab, origin] : found) {
    ab->classification = origin->classification;
    if (!ab->reference_trust) ab->reference_trust = origin->reference_trust;
  }
}

// One operator's model from its (sorted) records, counted into the run.
OperatorModel BuildOperator(const std::string& name, OperatorRecords& records, RunSums* sums,
                            RunModel* run) {
  OperatorModel op;
  op.name = name;
  op.facts = records.facts.get<OperatorFacts>();
  op.repro = ReproCommand(name, op.facts, records.cases, run->info);
  for (CaseRecord& c : records.cases) op.cases.emplace_back(std::move(c));
  TakeClassesFromOtherChunks(&op.cases);
  OperatorAllowances allowances = DeclaredAllowances(name, op.facts);
  for (const CaseModel& c : op.cases) CountCase(c, &op, &allowances, run);
  AddSpent(op.spent, &sums->spent_ms);
  op.allowances = AllowanceUses({allowances});
  sums->allowances.push_back(std::move(allowances));
  const int total = static_cast<int>(op.cases.size());
  op.failed = total - op.passed - op.waived;
  op.max_rel_diff = WorstRelativeDiff(op.cases);
  // Cases the selection left out (opverify-batch --filter, ...) are not owed.
  op.all_passed = total > 0 && op.failed == 0 &&
                  total >= op.facts.case_count.value_or(0) - LeftOutCount(op.facts);
  run->performance.operators_total += 1;
  run->performance.operators_correct += op.all_passed ? 1 : 0;
  if (op.all_passed && !records.bench_shapes.empty()) {
    op.performance = BuildPerformance(name, records, total);
    AddPerformance(name, *op.performance, &run->performance, &sums->dtype_speedups,
                   &sums->speedups);
  }
  run->totals.operators += 1;
  run->totals.cases += total;
  run->totals.passed += op.passed;
  run->totals.waived += op.waived;
  return op;
}

}  // namespace

RunModel BuildRunModel(std::vector<CaseRecord> records, std::vector<std::string> problems,
                       const json& run_info, const std::string& run_dir,
                       const std::optional<RunPlan>& plan) {
  RunModel run;
  run.run_dir = run_dir;
  run.run_info = run_info;
  run.info = run_info.get<RunInfo>();
  run.problems = std::move(problems);
  std::map<std::string, OperatorRecords> by_name;
  for (CaseRecord& r : records) FileRecord(r, &by_name[r.op_name]);

  RunSums sums;
  for (auto& [name, records_of_op] : by_name) {
    std::sort(records_of_op.cases.begin(), records_of_op.cases.end(),
              [](const CaseRecord& a, const CaseRecord& b) { return a.case_index < b.case_index; });
    if (records_of_op.cases.empty() && records_of_op.bench_shapes.empty()) {
      run.facts_without_cases[name] = records_of_op.facts.get<OperatorFacts>();
      continue;
    }
    run.operators.push_back(BuildOperator(name, records_of_op, &sums, &run));
  }
  run.totals.failed = run.totals.cases - run.totals.passed - run.totals.waived;
  run.allowances = AllowanceUses(sums.allowances);
  if (plan) run.incomplete = MissingFromPlan(run, *plan);
  run.totals.lost = static_cast<int>(run.problems.size() + run.incomplete.size());
  FinishPerformance(sums.dtype_speedups, sums.speedups, &run.performance);
  run.time_split = BuildTimeSplit(run.info, sums.spent_ms);
  return run;
}

CaseModel::CaseModel(CaseRecord record)
    : CaseRecord(std::move(record)), content(ReadCaseContent(*this)) {}

std::string FailureRow::AbText() const {
  const std::optional<std::string> text = AbClass();
  if (!text) return "-";
  return *text + (ab->inherited_from.empty() ? "" : " (inherited from " + ab->inherited_from + ")");
}

std::vector<std::string> RunModel::StaleAllowanceLines() const {
  std::vector<std::string> lines;
  for (const AllowanceUse& use : allowances) {
    if (use.State() == "stale") lines.push_back(StaleAllowanceLine(use));
  }
  return lines;
}

std::string OperatorFolder(const std::string& name) {
  const std::string safe = SafeFileName(name, 64, "operator");
  if (safe == name) return name;
  return safe + "-" + Sha256Hex(name.data(), name.size()).substr(0, 12);
}

std::string TrustJudgementLine(const std::optional<TrustJudgement>& judgement) {
  if (!judgement) return "-";
  const TrustJudgement& j = *judgement;
  if (j.ran == false) return "not run: " + j.why;
  if (j.judged == false) {
    return "not judged: " +
           Utf8Prefix(j.error_type.empty() ? j.error_msg : j.error_type + ": " + j.error_msg, 200);
  }
  if (j.passed) return "passed";
  return "failed (" + j.error_type + ")";
}

std::string RunVersionLine(const RunInfo& info) {
  if (!info.opverify || !info.opverify->version) return "";
  std::string line = "opverify " + *info.opverify->version;
  if (info.opverify->commit) line += " (" + *info.opverify->commit + ")";
  return line;
}

}  // namespace opverify
