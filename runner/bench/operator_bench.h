// Benchmarks one operator whose cases passed: per case (shape), the
// framework (Model on the device) and the implementation (ModelNew), in an
// executor process (runner/executor/opverify_runtime/bench.py says how a
// repeat is timed). The loop behind `opverify bench` and the batch's
// performance phase.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/bench/clock_monitor.h"
#include "runner/config/bench_config.h"
#include "runner/results/bench_result.h"
#include "runner/verify/operator_run.h"

namespace opverify {

// Opens the clock of the device the executor reports (its environment);
// null where there is none to watch.
using ClockOpener = std::function<std::unique_ptr<ClockMonitor>(const nlohmann::json& environment)>;

// The default opener: NVML for cuda (by the device's UUID), npu-smi for npu,
// nothing for cpu; sampling every interval_s seconds.
ClockOpener DeviceClockOpener(double interval_s, double drift_tolerance = 0.05);

// Benchmarks every case of `spec` that spec.skip_case does not skip.
OperatorBenchResult BenchOperator(const OperatorSpec& spec, const RunOptions& options, const BenchConfig& settings,
                                  const ClockOpener& open_clock = nullptr);

}  // namespace opverify
