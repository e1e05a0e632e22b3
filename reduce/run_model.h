// The run model: everything the reports say about a run, aggregated once
// from the stored records. BuildRunModel is a pure function over plain data
// (no files, no clock); each reporter (reduce/reporter.h) only formats it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/failure_type.h"
#include "runner/results/bench_result.h"
#include "runner/results/waivers.h"
#include "runner/store/case_record.h"
#include "runner/store/record_facts.h"
#include "runner/store/run_info.h"
#include "runner/store/run_plan.h"

namespace opverify {

// passed + waived + failed = cases.
struct RunTotals {
  int operators = 0;
  int cases = 0;
  int passed = 0;  // without a waiver
  int waived = 0;  // passed under declared exceptions (docs/MANIFEST.md)
  int failed = 0;
  // Lines of RunModel::problems and RunModel::incomplete: results the run
  // should hold and does not. Never a pass, whatever the cases say.
  int lost = 0;
};

// One cell of the operators x dtypes grid (a case is filed under its first
// tensor input's dtype, "none" without one).
struct DtypeCell {
  int cases = 0;
  int failed = 0;
};

// The performance phase's result of an operator: present when every case
// passed (all `case_count` of them were stored) and shapes were benchmarked.
struct OperatorPerformance {
  OperatorBenchResult result;  // one shape per case index (the latest stored), in case order
  BenchConfig settings;        // the last work item's
  // perf_result.json's top level: the geometric mean speedup over the valid
  // shapes and the mean latencies; unset where it writes null.
  std::optional<double> speedup;
  std::optional<double> framework_ms;
  std::optional<double> implementation_ms;
};

// A stored case and its JSON columns, read once (runner/store/record_facts.h).
struct CaseModel : CaseRecord {
  CaseModel() = default;
  explicit CaseModel(CaseRecord record);
  CaseContent content;  // read from the record's columns when made
};

struct OperatorModel {
  std::string name;
  // passed + waived + failed = its cases.
  std::vector<CaseModel> cases;  // its cases (not its other records), by case index
  // Its "operator" records: environment, lint, impl_name, task_file, case_count, ...
  OperatorFacts facts;
  int passed = 0;  // without a waiver
  int waived = 0;  // passed under declared exceptions
  int failed = 0;
  // Its declared allowances and what its cases made of them (the run's
  // `allowances` join those declared once for several operators).
  std::vector<AllowanceUse> allowances;
  std::map<std::string, int> error_types;  // of its failed cases
  int reference_suspect =
      0;  // failed cases the A/B classified reference_suspect (opverify-reduce --baseline)
  CaseTimings spent;  // the cases' timings, summed (milliseconds)
  double wall_s() const { return spent.wall_ms / 1e3; }  // the cases' summed wall time
  std::map<std::string, DtypeCell> dtypes;
  // The largest relative difference over every judged output; unset when none was judged.
  std::optional<double> max_rel_diff;
  bool all_passed = false;  // every case stored and passed: the gate to its performance
  std::string repro;        // a command that runs the operator again by itself
  std::optional<OperatorPerformance> performance;
};

// A case that passed under declared exceptions, as the reports list it.
struct WaivedRow {
  std::string case_id;
  std::string op;
  nlohmann::json waivers;  // the case's (runner/results/waivers.h): op, why, declared_at, found
};

// A failed case, as the summary and the reports list it.
struct FailureRow {
  std::string case_id;
  std::string op;
  FailureType error_type;
  std::string message;  // the error message's first 300 characters
  int rank = 0;
  std::string stored_at;
  // Its A/B record: the classification (unset when the A/B could not
  // classify), the case its class is inherited from (the operator's first
  // failure of its kind; "" when its own A/B ran), the reference trust
  // record (reason, fp64 and device judgements; unset where the A/B did not
  // examine it). Unset without an A/B record.
  std::optional<AbRecord> ab;
  std::string repro;  // its operator's
  // The A/B's class; unset without an A/B record or a class.
  std::optional<std::string> AbClass() const { return ab ? ab->classification : std::nullopt; }
  // "real_defect", "real_defect (inherited from op/#0)", "-" without a class.
  std::string AbText() const;
  bool reference_suspect() const {
    return AbClass() == std::optional<std::string>("reference_suspect");
  }
  // The reference trust record, when the A/B examined it.
  const ReferenceTrust* Trust() const {
    return ab && ab->reference_trust ? &*ab->reference_trust : nullptr;
  }
};

struct OperatorSpeed {
  std::string name;
  int shapes = 0;
  std::optional<double> speedup;
  std::optional<double> framework_ms;
  std::optional<double> implementation_ms;
};

struct DtypeSpeed {
  int shapes = 0;                         // valid shape speedups of the dtype
  std::optional<double> geomean_speedup;  // over them
};

// summary.json's "performance": per operator, per dtype and overall
// geometric means, fast_p, and what to review.
struct PerformanceModel {
  std::vector<OperatorSpeed> operators;   // the benchmarked ones, by name
  std::optional<double> geomean_speedup;  // over the operators' speedups
  std::map<std::string, DtypeSpeed> by_dtype;
  // fast_p: {"1.0", "1.5", "2.0"} -> the share of all operators that are
  // correct and faster than p x the framework.
  std::vector<std::pair<std::string, double>> fast_p;
  int operators_total = 0;
  int operators_correct = 0;
  std::vector<std::string> review;
};

// Where the ranks' time went, in seconds. "compile" is Triton's compilation
// (the first launch of each kernel specialisation in an executor, timed by
// the executor's compile clock) and is not in construct, probe or impl;
// "probe" is the hidden-state probe before a first case; "checks" the
// implementation executor's checks around its forward (CaseTimings::checks_ms:
// the runtime evidence judged, free memory poisoned, the ghost replay); "executor" is the
// rest of a case's wall time (requests, tensor hand-over, restarts after a
// failure); "startup" is per work item: starting an executor, importing
// torch and the operator, the lint; "stopped" the cases the run's stop
// (--time-limit, a signal) cut short, which ran but were not stored; idle
// is what remains of ranks x run wall time (waiting for work, the last
// ranks finishing). compile_cached_s is the
// part of compile_s Triton's disk cache served (kernels loaded, not
// compiled: what a warm --cache-dir saves), unset where no case could tell.
struct TimeSplit {
  double rank_seconds = 0;
  double compile_s = 0, construct_s = 0, probe_s = 0, golden_s = 0, impl_s = 0, judge_s = 0;
  double checks_s = 0;  // CaseTimings::checks_ms, summed
  double executor_s = 0, store_s = 0, ab_s = 0, bench_s = 0, startup_s = 0, idle_s = 0;
  double stopped_s = 0;
  double idle_fraction = 0;
  std::optional<double> compile_cached_s;
};

// A case the run did not run: left out by the selection (opverify-batch
// --filter, --exclude, --tag, --dtype, --rerun-failed) or not reached (the
// run was stopped, or a rank lost it). junit.xml's <skipped>.
struct SkippedCase {
  std::string op;
  std::string case_id;  // "<op>" alone for an operator whose case ids were never known
  std::string reason;
};

struct RunModel {
  std::string run_dir;  // absolute
  // What the batch recorded of itself (manifest, manifest_name, ranks,
  // launcher, backend, timing, ...): copied into the summary as given.
  nlohmann::json run_info = nlohmann::json::object();
  RunInfo info;  // run_info's fields, read once
  RunTotals totals;
  std::vector<OperatorModel> operators;    // by name
  std::vector<FailureRow> failures;        // by operator, then case
  std::map<std::string, int> error_types;  // over every failed case
  std::map<std::string, int> ab;  // A/B classification -> failed cases ("none": not classified)
  PerformanceModel performance;
  std::optional<TimeSplit> time_split;  // when run_info has timing.run_wall_s
  std::vector<std::string> problems;    // journaled cases the store could not read
  // What the run's plan (plan.json) promised that the store does not hold:
  // an operator without results, or with fewer cases than it has. Empty
  // without a plan.
  std::vector<std::string> incomplete;
  std::vector<SkippedCase> skipped;  // by AddSkippedCases (reduce/skipped_cases.h)
  // The operator records of operators none of whose cases ran (each left out
  // by the selection once its task was loaded): not in `operators`.
  std::map<std::string, OperatorFacts> facts_without_cases;
  std::vector<WaivedRow> waived;  // the waived cases, by operator, then case
  // Every declared allowance of the run's operators and what the run made
  // of it (used, stale, unchecked), in the order the operators declare them.
  std::vector<AllowanceUse> allowances;
  // The stale ones, one warning line each (StaleAllowanceLine).
  std::vector<std::string> StaleAllowanceLines() const;
};

// One judgement of a reference trust record ("fp64" or "device_reference"),
// in a few words for the reports: "passed", "failed (AccuracyError)",
// "not judged: ...", "not run: ..."; "-" where there is none.
std::string TrustJudgementLine(const std::optional<TrustJudgement>& judgement);

// "opverify 0.1.0 (abc1234)": the build that ran the run, from run_info's
// "opverify" block (the batch writes it); "" for a run that has none.
std::string RunVersionLine(const RunInfo& info);

// The folder under ops/ of the operator `name`: the name itself when it is a
// safe file name (a manifest's names always are), else SafeFileName's
// version of it and a hash of the original, so that a name from a tampered
// store is never a path ("../x" -> "x-<12 hex digits>").
std::string OperatorFolder(const std::string& name);

// The one aggregation pass. `records`: ReadRunRecords' (cases, and the
// operator facts and benchmark records that ride with them); `problems`:
// its problems; `run_dir`: the run folder, absolute; `plan`: the run's
// plan.json, when it has one (see MissingFromPlan).
RunModel BuildRunModel(std::vector<CaseRecord> records, std::vector<std::string> problems,
                       const nlohmann::json& run_info, const std::string& run_dir,
                       const std::optional<RunPlan>& plan = std::nullopt);

// The planned operators the store lacks results of, one line each: none at
// all, or fewer cases than the most it should hold (the plan's min_cases,
// the count its "operator" record gives, at least one), less the cases the
// selection left out of it (its record's `left_out`).
std::vector<std::string> MissingFromPlan(const RunModel& run, const RunPlan& plan);

}  // namespace opverify
