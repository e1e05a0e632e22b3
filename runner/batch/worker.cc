#include "runner/batch/worker.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "runner/batch/item_records.h"
#include "runner/bench/operator_bench.h"
#include "runner/common/failure_type.h"
#include "runner/common/terminal_text.h"
#include "runner/judge/standards.h"
#include "runner/scheduler/rank_reports.h"
#include "runner/store/record_facts.h"
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
  if (FailureType::FromText(error_type) != FailureKind::kCrash || stop == nullptr) return false;
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

// The item's cases the benchmark covers (all the operator's own when the
// item names none), less those the selection left out.
std::vector<int> BenchIndices(const WorkItem& item, const OperatorOutcome& outcome,
                              const std::function<std::string(int)>& case_id,
                              const json& left_out) {
  std::vector<int> indices;
  for (int i : item.case_indices) {
    if (!left_out.contains(case_id(i))) indices.push_back(i);
  }
  if (item.case_indices.empty()) {
    for (int i = 0; i < outcome.own_cases; ++i) {
      if (!left_out.contains(case_id(i))) indices.push_back(i);
    }
  }
  return indices;
}

// Whether every case of `indices` passed, in this run or the resumed one
// (one that never ran did not). Generated edge cases are judged, not
// benchmarked; but one that failed keeps the operator out of the benchmark.
bool ItemPassed(const OperatorJob& op, const OperatorOutcome& outcome,
                const std::vector<int>& indices, const std::function<std::string(int)>& case_id,
                const WorkerSetup& setup) {
  std::map<int, bool> ran;
  for (const CaseOutcome& c : outcome.cases) ran[c.index] = c.passed;
  bool all_passed = !indices.empty();
  for (std::size_t k = 0; k < outcome.edge_cases.size(); ++k) {
    const int index = outcome.own_cases + static_cast<int>(k);
    const auto earlier = setup.done.find(EdgeCaseId(op.name, outcome.edge_cases[k].label));
    if ((ran.count(index) > 0 && !ran[index]) || (earlier != setup.done.end() && !earlier->second))
      all_passed = false;
  }
  for (int i : indices) {
    const auto earlier = setup.done.find(case_id(i));
    if (ran.count(i) > 0) {
      all_passed = all_passed && ran[i];
    } else if (earlier != setup.done.end()) {
      all_passed = all_passed && earlier->second;
    } else {
      all_passed = false;  // never ran (the operator did not load)
    }
  }
  return all_passed;
}

// The shapes of `indices` whose benchmark is not stored yet; all of them
// when every shape is stored but the item's own record was lost (a kill
// between the two): its settings, clock and environment exist only if
// measured again.
std::set<int> ShapesToBench(const OperatorJob& op, const WorkItem& item,
                            const std::vector<int>& indices,
                            const std::function<std::string(int)>& case_id,
                            const WorkerSetup& setup) {
  std::set<int> to_bench;
  for (int i : indices) {
    if (setup.benched.count(case_id(i)) == 0) to_bench.insert(i);
  }
  if (to_bench.empty() && setup.facts.count(FactId("bench-item", op, item)) == 0)
    to_bench.insert(indices.begin(), indices.end());
  return to_bench;
}

// Stores each shape the stop did not cut short; false when the store
// failed. *stored counts them.
bool StoreShapes(const OperatorJob& op, const OperatorBenchResult& result,
                 const std::function<std::string(int)>& case_id, const WorkerSetup& setup,
                 std::size_t* stored) {
  for (const ShapeResult& shape : result.shapes) {
    if (!shape.passed && DiedOfTheStop(shape.error_type, setup.run.executor.stop)) {
      spdlog::warn("rank {}: {} [shape {}] not stored: the stop cut it short", setup.rank, op.name,
                   shape.case_idx);
      continue;
    }
    ++*stored;
    if (!Store(setup, ShapeRecord(op, shape, case_id(shape.case_idx - 1), setup.rank)))
      return false;
  }
  return true;
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
  const std::vector<int> indices = BenchIndices(item, outcome, case_id, left_out);
  const bool all_passed = ItemPassed(op, outcome, indices, case_id, setup);
  const std::set<int> to_bench = ShapesToBench(op, item, indices, case_id, setup);
  if (!all_passed || to_bench.empty()) return true;

  const auto started = std::chrono::steady_clock::now();
  OperatorSpec bench_spec = spec;
  bench_spec.skip_case = [&](int i, const std::string&) { return to_bench.count(i) == 0; };
  bench_spec.config.edge_cases = false;
  const BenchConfig& settings = op.bench;
  const OperatorBenchResult result = BenchOperator(
      bench_spec, run, settings, DeviceClockOpener(setup.options->freq_check_interval_s));
  std::size_t stored = 0;
  if (!StoreShapes(op, result, case_id, setup, &stored)) return false;
  if (stored == 0) return true;  // stopped before any shape was measured: --resume benchmarks them
  CaseRecord meta = FactRecord(RecordKind::kBenchItem, "bench-item", op, item, setup.rank);
  meta.extra = BenchItemFacts{settings, result.clock, result.environment, result.wall_s,
                              result.shapes.size()};
  if (!Store(setup, meta)) return false;
  report(BenchSummary{
      op.name, result.shapes.size(),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
          .count()});
  return true;
}

// Where an item's time went, in milliseconds, for the run's timeline: the
// cases' wall time (the compile time within it apart), their A/B re-runs
// and storing, the benchmark, the cases the run's stop cut short (their
// runs and any A/B, none of it stored); the rest of the item is start-up
// (starting the executor, importing, loading the operator, the lint).
struct ItemPhases {
  double cases_ms = 0, compile_ms = 0, ab_ms = 0, store_ms = 0, bench_ms = 0, stopped_ms = 0;
  int cases = 0;

  void Add(const CaseOutcome& c) {
    cases_ms += c.wall_ms;
    compile_ms += c.timings.value("compile_ms", 0.0);
    ++cases;
  }
  // The item's summary for the run's timeline, of its `item_ms`.
  ItemSummary Summary(double item_ms) const {
    return {item_ms,
            std::max(0.0, item_ms - cases_ms - ab_ms - store_ms - bench_ms - stopped_ms),
            compile_ms,
            std::max(0.0, cases_ms - compile_ms),
            ab_ms,
            store_ms,
            bench_ms,
            stopped_ms,
            cases};
  }
};

// The A/B of one item's accuracy failures (PRODUCT.md step 6), bounded: the
// first failure of each kind (its dtype and failing checks) is re-run and the
// later ones of that kind inherit its class, marked with the case they
// inherit from (--ab-every-case: each is re-run); a re-run needs one of the
// run's --max-ab, asked of the coordinator, else the A/B is "skipped (budget)".
// An operator cut into chunks asks the coordinator for each kind, so that it
// is re-run once over all its chunks: a later chunk's case records the case
// it inherits from with no class, which the reports take from that case.
class ItemAb {
 public:
  ItemAb(const WorkerSetup& setup, const OperatorSpec& spec, const RunOptions& run, bool chunked)
      : setup_(setup), spec_(spec), run_(run), chunked_(chunked) {}

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
    const bool shared = chunked_ && !options.ab_every_case && setup_.channel != nullptr;
    if (shared || options.max_ab >= 0) {
      const AbAnswer answer =
          setup_.channel == nullptr
              ? AbAnswer{}
              : setup_.channel->AskAb({shared ? spec_.name : "", kind, case_id});
      if (!answer.inherit_from.empty()) {
        const json inherited = {{"classification", nullptr},
                                {"inherited_from", answer.inherit_from},
                                {"kind", kind},
                                {"reference_trust", nullptr}};
        first_of_kind_[kind] = {answer.inherit_from, inherited};  // later ones name the origin
        return inherited;
      }
      if (!answer.granted)
        return {{"classification", "skipped (budget)"}, {"max_ab", options.max_ab}, {"kind", kind}};
    }
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
  const bool chunked_;  // the item is one chunk of its operator's cases
  std::map<std::string, std::pair<std::string, json>> first_of_kind_;  // kind -> its case, A/B
};

// The console's word on a stored case (RunWorkItem's `report`).
CaseSummary CaseReport(const CaseOutcome& c, const CaseRecord& record, double store_ms,
                       double ab_ms) {
  CaseSummary summary{record.case_id,
                      record.op_name,
                      c.index,
                      c.passed,
                      c.waived(),
                      c.error_type,
                      TerminalLine(c.error_msg, 300),
                      CaseDtype(record.params, c.input_desc),
                      c.wall_ms,
                      store_ms,
                      ab_ms,
                      std::nullopt,
                      ""};
  if (record.ab.is_object()) {
    const AbRecord ab = record.ab.get<AbRecord>();
    summary.ab = ab.classification;
    summary.ab_inherited_from = ab.inherited_from;
  }
  return summary;
}

// One work item, step by step: choose its cases, verify them (each stored
// as it finishes, an accuracy failure with its A/B), store the operator's
// facts, benchmark what passed, report where the time went.
class WorkItemRun {
 public:
  WorkItemRun(const WorkItem& item, const WorkerSetup& setup,
              const std::function<void(const json&)>& report)
      : item_(item),
        setup_(setup),
        report_(report),
        op_(setup.job->operators.at(static_cast<std::size_t>(item.op_index))),
        options_(*setup.options),
        spec_(SpecFor(op_, options_)),
        mine_(item.case_indices.begin(), item.case_indices.end()),
        run_(setup.run),
        item_ab_(setup, spec_, run_, item.chunks > 1) {
    SelectCases();
  }

  // false: the store failed (the rank cannot go on).
  bool Run();

 private:
  std::string OwnCaseId(int index) const {
    return CaseId(op_.name,
                  op_.cases.empty() ? json(nullptr) : op_.cases[static_cast<std::size_t>(index)],
                  index);
  }
  std::string IdOf(int index, const std::string& edge_label) const {
    return edge_label.empty() ? OwnCaseId(index) : EdgeCaseId(op_.name, edge_label);
  }
  bool Stopping() const {
    return setup_.run.executor.stop != nullptr && setup_.run.executor.stop->load() != 0;
  }
  // --maxfail: the coordinator has heard enough failures; the case in hand finishes.
  bool Halted() const { return setup_.channel != nullptr && setup_.channel->Halted(); }
  // Whether the selection keeps a case; one it leaves out goes to left_out_ with why.
  bool Selected(int index, const std::string& id, const json& input_desc);
  // spec_'s skip_case and skip_by_inputs: another item's, stored, stopped, or not selected.
  void SelectCases();
  void StoreCase(const CaseOutcome& c);
  // Whether the run this one resumes stored any of the item's cases.
  bool StoredBefore(const OperatorOutcome& outcome) const;
  // After any case ran, and on a resume that finds it lost. A stopped item
  // that stored no case leaves it to --resume.
  bool WantsOperatorFacts(const OperatorOutcome& outcome) const {
    return (stored_cases_ > 0 || !Stopping()) &&
           (!outcome.cases.empty() || !left_out_.empty() ||
            (setup_.facts.count(FactId("operator", op_, item_)) == 0 && StoredBefore(outcome)));
  }

  const WorkItem& item_;
  const WorkerSetup& setup_;
  const std::function<void(const json&)>& report_;
  const OperatorJob& op_;
  const BatchOptions& options_;
  OperatorSpec spec_;
  const std::set<int> mine_;
  // Cases the selection leaves out (--filter, --dtype, ...), with why: the
  // operator's record keeps them for the reports' "skipped".
  json left_out_ = json::object();
  const RunOptions& run_;  // the rank's (setup_.run)
  ItemAb item_ab_;
  bool store_ok_ = true;
  int stored_cases_ = 0;
  ItemPhases phases_;
};

bool WorkItemRun::Selected(int index, const std::string& id, const json& input_desc) {
  const auto at = static_cast<std::size_t>(index);
  const json params = at < op_.cases.size() ? op_.cases[at] : json(nullptr);
  const std::string why =
      CaseLeftOut(options_.selection, op_.name, id, CaseDtype(params, input_desc));
  if (!why.empty()) left_out_[id] = why;
  return why.empty();
}

void WorkItemRun::SelectCases() {
  spec_.skip_case = [this](int index, const std::string& edge_label) {
    const std::string id = IdOf(index, edge_label);
    return (!mine_.empty() && mine_.count(index) == 0) || setup_.done.count(id) > 0 || Stopping() ||
           Halted() || (options_.selection.dtypes.empty() && !Selected(index, id, json::array()));
  };
  if (!options_.selection.dtypes.empty()) {
    spec_.skip_by_inputs = [this](int index, const std::string& edge_label,
                                  const json& input_desc) {
      return !Selected(index, IdOf(index, edge_label), input_desc);
    };
  }
}

bool WorkItemRun::Run() {
  const auto item_started = std::chrono::steady_clock::now();
  const OperatorOutcome outcome =
      RunOperator(spec_, run_, [this](const CaseOutcome& c) { StoreCase(c); });
  if (store_ok_ && WantsOperatorFacts(outcome))
    store_ok_ = Store(setup_, OperatorFactsRecord(outcome, op_, item_, setup_.rank, left_out_));
  if (store_ok_ && options_.bench && op_.bench.enabled && !Stopping() && !Halted()) {
    store_ok_ = BenchItem(
        op_, spec_, run_, item_, outcome, [this](int index) { return OwnCaseId(index); }, setup_,
        left_out_,
        [this](const json& bench) {
          phases_.bench_ms += bench.get<BenchSummary>().bench_ms;
          report_(bench);
        });
  }
  // The whole item's time: cases plus executor start-up, lint and loading,
  // and the benchmark; its phases for the run's timeline.
  report_(phases_.Summary(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - item_started)
          .count()));
  return store_ok_;
}

void WorkItemRun::StoreCase(const CaseOutcome& c) {
  if (!store_ok_) {
    phases_.Add(c);
    return;
  }
  if (!c.passed && DiedOfTheStop(c.error_type, setup_.run.executor.stop)) {
    phases_.stopped_ms += c.wall_ms;
    spdlog::warn("rank {}: {} not stored: the stop cut it short (--resume runs it)", setup_.rank,
                 IdOf(c.index, c.edge_label));
    return;
  }
  CaseRecord record = CaseRecordOf(c, op_, IdOf(c.index, c.edge_label), setup_.rank);
  double ab_ms = 0;
  if (options_.ab && FailureType::FromText(c.error_type) == FailureKind::kAccuracyError) {
    const auto ab_started = std::chrono::steady_clock::now();
    record.ab = item_ab_.Record(c, record.case_id, CaseDtype(record.params, c.input_desc));
    ab_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - ab_started)
                .count();
    record.timings["ab_ms"] = ab_ms;
    if (Stopping()) {  // the A/B was cut short: --resume runs the case and its A/B again
      phases_.stopped_ms += c.wall_ms + ab_ms;
      spdlog::warn("rank {}: {} not stored: the stop cut its A/B re-run short (--resume runs it)",
                   setup_.rank, record.case_id);
      return;
    }
  }
  phases_.Add(c);
  if (KeepsTensors(options_.store, c.passed)) record.tensors = c.tensors;
  const auto started = std::chrono::steady_clock::now();
  const bool stored = Store(setup_, record);
  const double store_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  if (!stored) {
    store_ok_ = false;
    return;
  }
  ++stored_cases_;
  phases_.ab_ms += ab_ms;
  phases_.store_ms += store_ms;
  report_(CaseReport(c, record, store_ms, ab_ms));
}

bool WorkItemRun::StoredBefore(const OperatorOutcome& outcome) const {
  for (int i = 0; i < outcome.case_count; ++i) {
    const std::string label =
        i >= outcome.own_cases
            ? outcome.edge_cases[static_cast<std::size_t>(i - outcome.own_cases)].label
            : "";
    if ((mine_.empty() || mine_.count(i) > 0) && setup_.done.count(IdOf(i, label)) > 0) return true;
  }
  return false;
}

}  // namespace

OperatorSpec SpecFor(const OperatorJob& op, const BatchOptions& options) {
  OperatorSpec spec;
  spec.name = op.name;
  spec.code = op.code;
  spec.config = op.config;
  if (options.timeout_s) spec.config.timeout_s = *options.timeout_s;
  if (options.warmup_timeout_s) spec.config.warmup_timeout_s = *options.warmup_timeout_s;
  spec.params = op.cases;
  return spec;
}

bool RunWorkItem(const WorkItem& item, const WorkerSetup& setup,
                 const std::function<void(const json&)>& report) {
  return WorkItemRun(item, setup, report).Run();
}

}  // namespace opverify
