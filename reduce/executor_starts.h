// How a run's implementation executors started, from each operator's record
// (its `startup`: OperatorSession::startup(), runner/verify/executor_session.h):
// how many, how many a spare served, how long the operators waited for
// theirs, and the executors' own split of their start (the Python
// interpreter, opverify's runtime, torch, the library a spare preloaded).
// summary.json's `executor_starts` (docs/PERFORMANCE.md, "Where an
// executor's start goes").
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "reduce/run_model.h"

namespace opverify {

// {executors, from_spares, preloaded, open_ms: {median, p90, max, total_s},
//  own_ms_median: {interpreter_ms, runtime_ms, torch_ms, preload_ms, ...}}: how
// many operators' implementation executors started (their start recorded),
// how many a spare served, how many had imported the operator's library
// before its load, the operators' waits, the medians of the executors' own
// split; nullopt where no start was recorded (older records, or none ran).
std::optional<nlohmann::ordered_json> ExecutorStartsJson(const RunModel& run);

}  // namespace opverify
