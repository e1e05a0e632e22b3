// How a run's implementation executors started, from each operator's record
// (its `startup`: OperatorSession::startup(), runner/verify/executor_session.h):
// how many, how many a spare served, how long the operators waited for
// theirs, and the executors' own split of their start (the Python
// interpreter, opverify's runtime, torch, the library a spare preloaded).
// summary.json's `executor_starts` (docs/PERFORMANCE.md, "Where an
// executor's start goes").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reduce/run_model.h"

namespace opverify {

struct ExecutorStarts {
  int executors = 0;    // operators whose implementation executor's start was recorded
  int from_spares = 0;  // ... that a spare started ahead served
  int preloaded = 0;    // ... that had imported the operator's library before its load
  std::vector<double> open_ms;  // each such operator's wait for its executor, in operator order
  std::map<std::string, std::vector<double>> own_ms;  // the executors' own split: part -> values
};

ExecutorStarts CollectExecutorStarts(const RunModel& run);

// {executors, from_spares, preloaded, open_ms: {median, p90, max, total_s},
//  own_ms_median: {interpreter_ms, runtime_ms, torch_ms, preload_ms, ...}};
// nullopt where no start was recorded (every operator's record older, or none ran).
std::optional<nlohmann::ordered_json> ExecutorStartsJson(const ExecutorStarts& starts);

}  // namespace opverify
