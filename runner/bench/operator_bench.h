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
#include "runner/verify/operator_run.h"

namespace opverify {

struct SideResult {
  bool measured = false;
  std::optional<double> latency_ms;  // the median of the repeats
  nlohmann::json stats;              // median, mean, stdev, min, max, repeats, rse, wall_median_ms
  std::optional<double> peak_memory_mb, added_memory_mb;
  nlohmann::json operators = nlohmann::json::object();  // kernel -> ms per forward
};

struct ShapeResult {
  int case_idx = 0;  // from 1
  nlohmann::json input_desc = nlohmann::json::array();
  std::vector<std::string> input_dtypes;
  bool passed = false;
  SideResult framework, implementation;
  std::optional<double> speedup;
  // The memory roofline: the least time the device's peak bandwidth allows
  // for reading the inputs and writing the outputs once (cuda only).
  std::optional<double> roofline_ms;
  bool above_roofline = false;  // the implementation measured faster than that: review it
  std::string error_type, error_msg;
  std::vector<std::string> warnings;
};

struct OperatorBenchResult {
  std::string op_name;
  std::vector<ShapeResult> shapes;
  nlohmann::json environment;   // the executor's fingerprint
  nlohmann::json clock;         // ClockReport::ToJson(), null when no clock was watched
  std::vector<std::string> warnings;
  double wall_s = 0;
};

// Opens the clock of the device the executor reports (its environment);
// null where there is none to watch.
using ClockOpener = std::function<std::unique_ptr<ClockMonitor>(const nlohmann::json& environment)>;

// The default opener: NVML for cuda (by the device's UUID), npu-smi for npu,
// nothing for cpu; sampling every interval_s seconds.
ClockOpener DeviceClockOpener(double interval_s, double drift_tolerance = 0.05);

// Benchmarks every case of `spec` that spec.skip_case does not skip.
OperatorBenchResult BenchOperator(const OperatorSpec& spec, const RunOptions& options, const BenchConfig& settings,
                                  const ClockOpener& open_clock = nullptr);

// A shape's whole record (timings, statistics, kernels, warnings) and back:
// the batch stores each measured shape and its reducer rebuilds the result.
nlohmann::json ShapeResultToJson(const ShapeResult& shape);
ShapeResult ShapeResultFromJson(const nlohmann::json& json);

// The seed's perf_result.json, then our own details under "opverify".
nlohmann::ordered_json PerfResultJson(const OperatorBenchResult& result, const BenchConfig& settings);

}  // namespace opverify
