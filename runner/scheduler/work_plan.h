// Choosing a job's operators, cutting them into work items and ordering
// them: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace opverify {

struct WorkItem {
  int id = 0;
  int op_index = 0;                // into the job's operators
  std::vector<int> case_indices;   // empty: every case of the operator
  double expected_s = 0;           // from the previous run, else an estimate
};

struct OperatorShape {
  std::string name;
  int known_cases = 0;  // sweep size; 0: the task's own cases, unknown until loaded
};

// One of N parts of a job, `--shard I/N` (a Slurm array task's part of a
// huge manifest): the operators whose position in the manifest, counted
// from 0 before --filter, is I modulo N. The N shards of a job cover each
// operator exactly once, and a shard is the same whatever the ranks, the
// timings or the filter.
struct Shard {
  int index = 0;  // I: 0 <= I < N
  int count = 1;  // N >= 1
};

// "I/N" with 0 <= I < N (decimal digits only); nullopt for anything else.
std::optional<Shard> ParseShard(const std::string& text);

// Whether the operator at `manifest_index` is in `shard`.
// Preconditions: manifest_index >= 0; `shard` as ParseShard returns it.
bool InShard(int manifest_index, const Shard& shard);

// The operators a run covers, as positions in the manifest, in manifest
// order: those in `shard` (if any; positions counted before the filter)
// whose name matches the glob `filter` (fnmatch, no flags; empty: all).
std::vector<int> SelectOperators(const std::vector<std::string>& names, const std::string& filter,
                                 const std::optional<Shard>& shard);

// One item per operator, except operators with more than max_cases_per_item
// known cases, which are cut into consecutive chunks of at most that many.
// Items are ordered longest expected first (previous_seconds: each
// operator's wall time in an earlier run). An operator with no previous
// time is expected to take the mean of those that have one (or, with no
// timings at all, the job keeps manifest order). Ties keep manifest order.
// Preconditions: max_cases_per_item >= 1.
std::vector<WorkItem> PlanWork(const std::vector<OperatorShape>& ops,
                               const std::map<std::string, double>& previous_seconds, int max_cases_per_item);

}  // namespace opverify
