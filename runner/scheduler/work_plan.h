// Choosing a job's operators, cutting them into work items and ordering
// them: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace opverify {

struct WorkItem {
  int id = 0;
  int op_index = 0;                // into the job's operators
  std::vector<int> case_indices;   // empty: every case of the operator
  double expected_s = 0;           // from the previous run, else an estimate
  int chunk = 0;                   // which of its operator's `chunks` items this is
  int chunks = 1;                  // how many items its operator was cut into
};

struct OperatorShape {
  std::string name;
  int known_cases = 0;  // sweep size; 0: the task's own cases, unknown until loaded
  // The cases' summed weight (CaseWeight); 0: each known case weighs 1.
  double case_weight = 0;
};

// How the work is cut and ordered (opverify-batch --schedule).
//   kCost: each operator's cost predicted (PredictCost), operators without
//     a previous time first, then longest expected first; an operator whose
//     cost exceeds half the ranks' fair share is cut into case chunks.
//   kFifo: the plan before costs: chunks of max_cases_per_item only, the
//     previous run's longest first where it has times, else manifest order.
enum class SchedulePolicy { kCost, kFifo };

// "cost" or "fifo"; nullopt for anything else.
std::optional<SchedulePolicy> ParseSchedulePolicy(const std::string& text);

struct PlanSettings {
  SchedulePolicy policy = SchedulePolicy::kCost;
  int ranks = 1;                // >= 1: the workers the items are shared by
  int max_cases_per_item = 64;  // >= 1: no item holds more known cases
};

// What one case of a sweep is expected to cost, in units of a small case:
// 1 plus its parameters' tensor bytes (every integer list is taken as a
// shape, of the case's "dtype" where it names one, else 4-byte elements)
// per 64 MiB. A relative weight, for operators that have no history.
double CaseWeight(const nlohmann::json& params);

// Each operator's predicted seconds: its previous time where it has one;
// else (1 + its cases' weight) x the seconds a unit cost in the operators
// that have one (a start-up counts as one case), or relative units (1 s a
// unit) when none has. Parallel to `ops`.
std::vector<double> PredictCost(const std::vector<OperatorShape>& ops,
                                const std::map<std::string, double>& previous_seconds);

// One of N parts of a job, `--part I/N` (a Slurm array task's part of a
// huge manifest): the operators whose position in the manifest, counted
// from 0 before --filter, is I modulo N. The N parts of a job cover each
// operator exactly once, and a part is the same whatever the ranks, the
// timings or the filter. (A "shard" is a rank's HDF5 file, nothing else.)
struct ManifestPart {
  int index = 0;  // I: 0 <= I < N
  int count = 1;  // N >= 1
};

// "I/N" with 0 <= I < N (decimal digits only); nullopt for anything else.
std::optional<ManifestPart> ParseManifestPart(const std::string& text);

// Whether the operator at `manifest_index` is in `part`.
// Preconditions: manifest_index >= 0; `part` as ParseManifestPart returns it.
bool InManifestPart(int manifest_index, const ManifestPart& part);

// The operators a run covers, as positions in the manifest, in manifest
// order: those in `part` (if any; positions counted before the filter)
// whose name matches the glob `filter` (fnmatch, no flags; empty: all).
std::vector<int> SelectOperators(const std::vector<std::string>& names, const std::string& filter,
                                 const std::optional<ManifestPart>& part);

// The work items of a job, ids 0..n-1 in the order they are handed out.
// One item per operator, except operators with more than max_cases_per_item
// known cases, which are cut into consecutive chunks of at most that many,
// and (kCost) operators whose predicted cost exceeds half the fair share
// (the total over `ranks`), cut into chunks of about that half (at most one
// per known case): the ranks then finish together. Operators with no known
// cases (a task's own, generated edge cases) stay whole.
// kFifo orders longest expected first by previous_seconds (each operator's
// wall time in an earlier run), an operator without one taking the mean of
// those that have one (none: manifest order). kCost hands out first the
// operators that have no previous time (by their predicted cost: a new
// operator must not be the run's tail), then the others longest first.
// Ties keep manifest order.
// Preconditions: settings.ranks >= 1, settings.max_cases_per_item >= 1.
std::vector<WorkItem> PlanWork(const std::vector<OperatorShape>& ops,
                               const std::map<std::string, double>& previous_seconds,
                               const PlanSettings& settings);

}  // namespace opverify
