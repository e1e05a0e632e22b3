#include "runner/batch/worker.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "runner/bench/operator_bench.h"
#include "runner/common/terminal_text.h"
#include "runner/judge/standards.h"
#include "runner/judge/verdict_json.h"
#include "runner/results/verify_result.h"
#include "runner/verify/ab_rerun.h"
#include "runner/verify/operator_run.h"

namespace opverify {
namespace {

using nlohmann::json;

// A case or benchmark shape the stop cut short says nothing about the
// operator: it is not stored, so that --resume runs it again. Either the
// rank abandoned it (kStoppedErrorType: the call in flight is interrupted and
// its executor killed), or Slurm, which stops a job (scancel, a requeue, the
// time limit) by signalling every process of it, killed the executor first.
// The rank may handle its own signal a moment after it saw its executor die,
// hence the short wait.
bool DiedOfTheStop(const std::string& error_type, const std::atomic<int>* stop) {
  if (error_type == kStoppedErrorType) return true;
  if (error_type != "Crash" || stop == nullptr) return false;
  for (int waited_ms = 0; stop->load() == 0 && waited_ms < 250; waited_ms += 10) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return stop->load() != 0;
}

// Appends `record` to the rank's shard; a failure is logged and returns false.
bool Store(const WorkerSetup& setup, const CaseRecord& record) {
  Status stored = setup.shard->Append(record);
  if (!stored.ok()) {
    spdlog::critical("rank {}: storing {} failed: {}", setup.rank, record.case_id,
                     stored.ToString());
  }
  return stored.ok();
}

// The id of a record that is no case: "<op>/@<tag>/<item id>".
std::string FactId(const std::string& tag, const OperatorJob& op, const WorkItem& item) {
  return op.name + "/@" + tag + "/" + std::to_string(item.id);
}

// A record that is no case: `kind`'s facts about `item` of operator `op`,
// named by FactId, its content left for the caller's `extra`.
CaseRecord FactRecord(RecordKind kind, const std::string& tag, const OperatorJob& op,
                      const WorkItem& item, int rank) {
  CaseRecord fact;
  fact.case_id = FactId(tag, op, item);
  fact.op_name = op.name;
  fact.kind = kind;
  fact.case_index = -1;
  fact.passed = true;
  fact.rank = rank;
  return fact;
}

// The performance phase of one item (PRODUCT.md step 7): when every case of
// the item passed (this run's and those stored by an earlier, resumed run),
// its shapes are benchmarked on this rank, the one that verified them, and
// each measured shape is stored as a row of its own. The reducer writes
// perf_result.json only for operators all of whose cases passed.
bool BenchItem(const OperatorJob& op, const OperatorSpec& spec, const RunOptions& run,
               const WorkItem& item, const OperatorOutcome& outcome,
               const std::function<std::string(int)>& case_id, const WorkerSetup& setup,
               const json& left_out, const std::function<void(const json&)>& report) {
  std::vector<int> indices;  // the item's, less those the selection left out (not benchmarked)
  for (int i : item.case_indices) {
    if (!left_out.contains(case_id(i))) indices.push_back(i);
  }
  if (item.case_indices.empty()) {
    for (int i = 0; i < outcome.own_cases; ++i) {
      if (!left_out.contains(case_id(i))) indices.push_back(i);
    }
  }
  std::map<int, bool> ran;
  for (const CaseOutcome& c : outcome.cases) ran[c.index] = c.passed;
  bool all_passed = !indices.empty();
  // Generated edge cases are judged, not benchmarked; but one that failed
  // (now or in the resumed run) keeps the operator out of the benchmark.
  for (std::size_t k = 0; k < outcome.edge_cases.size(); ++k) {
    const int index = outcome.own_cases + static_cast<int>(k);
    const auto earlier = setup.done.find(EdgeCaseId(op.name, outcome.edge_cases[k].label));
    if ((ran.count(index) > 0 && !ran[index]) || (earlier != setup.done.end() && !earlier->second))
      all_passed = false;
  }
  std::set<int> to_bench;
  for (int i : indices) {
    const std::string id = case_id(i);
    const auto earlier = setup.done.find(id);
    if (ran.count(i) > 0) {
      all_passed = all_passed && ran[i];
    } else if (earlier != setup.done.end()) {
      all_passed = all_passed && earlier->second;
    } else {
      all_passed = false;  // never ran (the operator did not load)
    }
    if (setup.benched.count(id) == 0) to_bench.insert(i);
  }
  // Every shape stored but the item's own record lost (a kill between the
  // two): its settings, clock and environment exist only if measured again.
  if (to_bench.empty() && setup.facts.count(FactId("bench-item", op, item)) == 0)
    to_bench.insert(indices.begin(), indices.end());
  if (!all_passed || to_bench.empty()) return true;

  const auto started = std::chrono::steady_clock::now();
  OperatorSpec bench_spec = spec;
  bench_spec.skip_case = [&](int i, const std::string&) { return to_bench.count(i) == 0; };
  bench_spec.config.edge_cases = false;
  const BenchConfig& settings = op.bench;
  const OperatorBenchResult result = BenchOperator(
      bench_spec, run, settings, DeviceClockOpener(setup.options->freq_check_interval_s));
  std::size_t stored = 0;
  for (const ShapeResult& shape : result.shapes) {
    if (!shape.passed && DiedOfTheStop(shape.error_type, setup.stop)) {
      spdlog::warn("rank {}: {} [shape {}] not stored: the stop cut it short", setup.rank, op.name,
                   shape.case_idx);
      continue;
    }
    ++stored;
    CaseRecord record;
    record.case_id = case_id(shape.case_idx - 1) + "@bench";
    record.op_name = op.name;
    record.kind = RecordKind::kBenchShape;
    record.case_index = -1;
    record.passed = shape.passed;
    record.error_type = shape.error_type;
    record.error_msg = shape.error_msg;
    record.rank = setup.rank;
    record.extra = {{"case_id", case_id(shape.case_idx - 1)}, {"shape", ShapeResultToJson(shape)}};
    if (!Store(setup, record)) return false;
  }
  if (stored == 0) return true;  // stopped before any shape was measured: --resume benchmarks them
  CaseRecord meta = FactRecord(RecordKind::kBenchItem, "bench-item", op, item, setup.rank);
  meta.extra = {{"settings", settings.ToJson()},
                {"clock", result.clock},
                {"environment", result.environment},
                {"wall_s", result.wall_s},
                {"shapes", result.shapes.size()}};
  if (!Store(setup, meta)) return false;
  report({{"kind", "bench"},
          {"op", op.name},
          {"shapes", result.shapes.size()},
          {"bench_ms",
           std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
               .count()}});
  return true;
}

// Where an item's time went, in milliseconds, for the run's timeline: the
// cases' wall time (the compile time within it apart), their A/B re-runs
// and storing, the benchmark; the rest of the item is start-up (starting
// the executor, importing, loading the operator, the lint).
struct ItemPhases {
  double cases_ms = 0, compile_ms = 0, ab_ms = 0, store_ms = 0, bench_ms = 0;
  int cases = 0;

  void Add(const CaseOutcome& c) {
    cases_ms += c.wall_ms;
    compile_ms += c.timings.value("compile_ms", 0.0);
    ++cases;
  }
  // {item_ms, startup_ms, compile_ms, cases_ms (less compile), ab_ms, store_ms, bench_ms, cases}.
  json ToJson(double item_ms) const {
    return {{"item_ms", item_ms},
            {"startup_ms", std::max(0.0, item_ms - cases_ms - ab_ms - store_ms - bench_ms)},
            {"compile_ms", compile_ms},
            {"cases_ms", std::max(0.0, cases_ms - compile_ms)},
            {"ab_ms", ab_ms},
            {"store_ms", store_ms},
            {"bench_ms", bench_ms},
            {"cases", cases}};
  }
};

// The A/B of one item's accuracy failures (PRODUCT.md step 6), bounded: the
// first failure of each kind (its dtype and failing checks) is re-run and the
// later ones of that kind inherit its class, marked with the case they
// inherit from (--ab-every-case: each is re-run); a re-run needs one of the
// run's --max-ab, asked of the coordinator, else the A/B is "skipped (budget)".
class ItemAb {
 public:
  ItemAb(const WorkerSetup& setup, const OperatorSpec& spec, const RunOptions& run)
      : setup_(setup), spec_(spec), run_(run) {}

  // The A/B record of failed case `c`, stored as `case_id`, of dtype `dtype`.
  json Record(const CaseOutcome& c, const std::string& case_id, const std::string& dtype) {
    std::string kind = dtype.empty() ? "?" : dtype;
    for (const Verdict& v : c.outputs) {
      if (!v.passed) kind += " " + std::string(RouteName(v.route));
    }
    const BatchOptions& options = *setup_.options;
    if (const auto first = first_of_kind_.find(kind);
        first != first_of_kind_.end() && !options.ab_every_case) {
      const json& ab = first->second.second;
      return {{"classification", ab.value("classification", json(nullptr))},
              {"inherited_from", first->second.first},
              {"kind", kind},
              {"reference_trust", ab.value("reference_trust", json(nullptr))}};
    }
    if (options.max_ab >= 0 && (setup_.channel == nullptr || !setup_.channel->GrantAb()))
      return {{"classification", "skipped (budget)"}, {"max_ab", options.max_ab}, {"kind", kind}};
    AbRequest ab;
    ab.options = run_;
    ab.options.pool = nullptr;  // each A/B run needs a new process of its own
    ab.original_cache_dir = setup_.cache_dir;
    ab.fresh_cache_parent = setup_.ab_cache_parent;
    if (c.environment != nullptr) ab.original_environment = *c.environment;
    OperatorSpec alone = spec_;
    alone.skip_case = nullptr;
    ab.spec = &alone;
    json record = RunAb(ab, c);
    if (record.is_object()) record["kind"] = kind;
    first_of_kind_[kind] = {case_id, record};
    return record;
  }

 private:
  const WorkerSetup& setup_;
  const OperatorSpec& spec_;
  const RunOptions& run_;
  std::map<std::string, std::pair<std::string, json>> first_of_kind_;  // kind -> its case, A/B
};

}  // namespace

OperatorSpec SpecFor(const OperatorJob& op, const BatchOptions& options) {
  OperatorSpec spec;
  spec.name = op.name;
  spec.task_file = op.task_file;
  spec.impl_file = op.impl_file;
  spec.impl_name = op.impl_name;
  spec.override_spec = op.override_spec;
  spec.config = op.config;
  if (options.timeout_s) spec.config.timeout_s = *options.timeout_s;
  if (options.warmup_timeout_s) spec.config.warmup_timeout_s = *options.warmup_timeout_s;
  spec.params = op.cases;
  return spec;
}

bool RunWorkItem(const WorkItem& item, const WorkerSetup& setup,
                 const std::function<void(const json&)>& report) {
  const OperatorJob& op = setup.job->operators.at(static_cast<std::size_t>(item.op_index));
  const BatchOptions& options = *setup.options;
  OperatorSpec spec = SpecFor(op, options);
  auto own_case_id = [&](int index) {
    return CaseId(op.name,
                  op.cases.empty() ? json(nullptr) : op.cases[static_cast<std::size_t>(index)],
                  index);
  };
  auto case_id = [&](int index, const std::string& edge_label) {
    return edge_label.empty() ? own_case_id(index) : EdgeCaseId(op.name, edge_label);
  };
  std::set<int> mine(item.case_indices.begin(), item.case_indices.end());
  const auto stopping = [&] { return setup.stop != nullptr && setup.stop->load() != 0; };
  // --maxfail: the coordinator has heard enough failures; the case in hand finishes.
  const auto halted = [&] { return setup.channel != nullptr && setup.channel->Halted(); };
  // Cases the selection leaves out (--filter, --dtype, ...), with why: the
  // operator's record keeps them for the reports' "skipped".
  json left_out = json::object();
  const CaseSelection& selection = options.selection;
  auto selected = [&](int index, const std::string& id, const json& input_desc) {
    const auto at = static_cast<std::size_t>(index);
    const json params = at < op.cases.size() ? op.cases[at] : json(nullptr);
    const std::string why = CaseLeftOut(selection, op.name, id, CaseDtype(params, input_desc));
    if (!why.empty()) left_out[id] = why;
    return why.empty();
  };
  spec.skip_case = [&](int index, const std::string& edge_label) {
    const std::string id = case_id(index, edge_label);
    return (!mine.empty() && mine.count(index) == 0) || setup.done.count(id) > 0 || stopping() ||
           halted() || (selection.dtypes.empty() && !selected(index, id, json::array()));
  };
  if (!selection.dtypes.empty()) {
    spec.skip_by_inputs = [&](int index, const std::string& edge_label, const json& input_desc) {
      return !selected(index, case_id(index, edge_label), input_desc);
    };
  }

  RunOptions run;
  run.backend = options.backend;
  run.env = setup.executor_env;
  run.log_path = setup.executor_log;
  run.sandbox = options.sandbox;
  run.pool = setup.pool;
  run.start_executor = setup.start_executor;
  run.stop = setup.stop;

  ItemAb item_ab(setup, spec, run);
  const auto item_started = std::chrono::steady_clock::now();
  bool store_ok = true;
  int stored_cases = 0;
  ItemPhases phases;
  OperatorOutcome outcome = RunOperator(spec, run, [&](const CaseOutcome& c) {
    phases.Add(c);
    if (!store_ok) return;
    if (!c.passed && DiedOfTheStop(c.error_type, setup.stop)) {
      spdlog::warn("rank {}: {} not stored: the stop cut it short (--resume runs it)", setup.rank,
                   case_id(c.index, c.edge_label));
      return;
    }
    CaseRecord record;
    record.case_id = case_id(c.index, c.edge_label);
    record.op_name = op.name;
    record.case_index = c.index;
    if (!c.edge_label.empty()) {
      record.params = c.edge_params;
      record.extra["edge_case"] = c.edge_label;
    } else {
      record.params =
          op.cases.empty() ? json::object() : op.cases[static_cast<std::size_t>(c.index)];
    }
    record.input_desc = c.input_desc;
    record.passed = c.passed;
    record.waived = c.waived();
    record.error_type = c.error_type;
    record.error_msg = CutMiddle(c.error_msg);
    for (const Verdict& v : c.outputs) {
      record.outputs.push_back(VerdictToJson(v));
      if (record.route.empty() || (!v.passed && c.outputs.front().passed))
        record.route = std::string(RouteName(v.route));
    }
    record.timings = c.timings;
    record.timings["wall_ms"] = c.wall_ms;
    record.timings["judge_ms"] = c.judge_ms;
    record.rank = setup.rank;
    record.device = c.device_name;
    record.extra["warnings"] = c.warnings;
    record.extra["golden_device"] = c.golden_device;
    record.extra["details"] = json::parse(CaseDetails(c).dump());
    if (!c.passed) record.extra["failure"] = json::parse(FailureEntry(c).dump());
    record.extra["impl_name"] = op.impl_name;
    record.extra["actual_sha256"] = c.actual_sha256;
    double ab_ms = 0;
    if (options.ab && c.error_type == "AccuracyError") {
      const auto ab_started = std::chrono::steady_clock::now();
      record.ab = item_ab.Record(c, record.case_id, CaseDtype(record.params, c.input_desc));
      ab_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - ab_started)
              .count();
      record.timings["ab_ms"] = ab_ms;
      if (stopping()) {  // the A/B was cut short: --resume runs the case and its A/B again
        spdlog::warn("rank {}: {} not stored: the stop cut its A/B re-run short (--resume runs it)",
                     setup.rank, record.case_id);
        return;
      }
    }
    if (KeepsTensors(options.store, c.passed)) record.tensors = c.tensors;
    const auto started = std::chrono::steady_clock::now();
    const bool stored = Store(setup, record);
    const double store_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    if (!stored) {
      store_ok = false;
      return;
    }
    ++stored_cases;
    phases.ab_ms += ab_ms;
    phases.store_ms += store_ms;
    report({{"case_id", record.case_id},
            {"op", op.name},
            {"index", c.index},
            {"passed", c.passed},
            {"waived", c.waived()},
            {"error_type", c.error_type},
            {"message", TerminalLine(c.error_msg, 300)},
            {"dtype", CaseDtype(record.params, c.input_desc)},
            {"wall_ms", c.wall_ms},
            {"store_ms", store_ms},
            {"ab_ms", ab_ms},
            {"ab", record.ab.is_object() ? record.ab.value("classification", json(nullptr))
                                         : json(nullptr)}});
  });
  // Operator-level facts (environment, lint, non_compute) go in a small side
  // record so reports can rebuild verify_result.json from the store alone:
  // after any case ran, and on a resume that finds it lost. A stopped item
  // that stored no case leaves it to --resume.
  const auto stored_before = [&] {  // by the run this one resumes
    for (int i = 0; i < outcome.case_count; ++i) {
      const std::string label =
          i >= outcome.own_cases
              ? outcome.edge_cases[static_cast<std::size_t>(i - outcome.own_cases)].label
              : "";
      if ((mine.empty() || mine.count(i) > 0) && setup.done.count(case_id(i, label)) > 0)
        return true;
    }
    return false;
  };
  if (store_ok && (stored_cases > 0 || !stopping()) &&
      (!outcome.cases.empty() || !left_out.empty() ||
       (setup.facts.count(FactId("operator", op, item)) == 0 && stored_before()))) {
    CaseRecord meta = FactRecord(RecordKind::kOperator, "operator", op, item, setup.rank);
    meta.device = outcome.environment.is_object() && outcome.environment.contains("device") &&
                          outcome.environment["device"].is_object()
                      ? outcome.environment["device"].value("name", "")
                      : "";
    meta.extra = {
        {"environment", outcome.environment}, {"lint", outcome.lint},
        {"non_compute", outcome.non_compute}, {"non_compute_given", outcome.non_compute_given},
        {"case_count", outcome.case_count},   {"impl_name", op.impl_name},
        {"task_file", op.task_file},          {"lint_enabled", op.config.lint},
        {"allow_torch", outcome.declared_allowances},
        {"allow_torch_checked", outcome.allowances_checked()}};
    meta.extra["startup"] = outcome.startup;  // how its implementation executor started
    if (!left_out.empty()) meta.extra["left_out"] = left_out;
    store_ok = Store(setup, meta);
  }
  if (store_ok && options.bench && op.bench.enabled && !stopping() && !halted()) {
    store_ok = BenchItem(op, spec, run, item, outcome, own_case_id, setup, left_out,
                         [&](const json& bench) {
                           phases.bench_ms += bench.value("bench_ms", 0.0);
                           report(bench);
                         });
  }
  // The whole item's time: cases plus executor start-up, lint and loading,
  // and the benchmark; its phases for the run's timeline.
  json item_summary = phases.ToJson(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - item_started)
          .count());
  item_summary["kind"] = "item";
  report(item_summary);
  return store_ok;
}

}  // namespace opverify
