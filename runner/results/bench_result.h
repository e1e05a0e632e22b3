// What benchmarking one operator measured: per shape, the framework and the
// implementation side by side; and its JSON forms: the stored record of a
// shape and the seed's perf_result.json. Plain data, made by
// runner/bench/operator_bench.h and read by the reports (the reducer).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/config/bench_config.h"

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

// A shape's whole record (timings, statistics, kernels, warnings) and back:
// the batch stores each measured shape and its reducer rebuilds the result.
nlohmann::json ShapeResultToJson(const ShapeResult& shape);
ShapeResult ShapeResultFromJson(const nlohmann::json& json);
// The same, for nlohmann::json's conversions.
void to_json(nlohmann::json& j, const ShapeResult& shape);
void from_json(const nlohmann::json& j, ShapeResult& shape);

// BenchConfig's ToJson and FromJson, for nlohmann::json's conversions.
void to_json(nlohmann::json& j, const BenchConfig& config);
void from_json(const nlohmann::json& j, BenchConfig& config);

// The facts of a benchmark work item: the extra of its
// RecordKind::kBenchItem record (runner/batch/worker.cc writes it).
struct BenchItemFacts {
  BenchConfig settings = BenchConfig::FromJson(nlohmann::json::object());
  nlohmann::json clock;        // ClockReport::ToJson(), null when no clock was watched
  nlohmann::json environment;  // the executor's fingerprint
  double wall_s = 0;
  std::size_t shapes = 0;  // the shapes it measured
};
void to_json(nlohmann::json& j, const BenchItemFacts& item);
void from_json(const nlohmann::json& j, BenchItemFacts& item);

// One benchmarked shape: the extra of its RecordKind::kBenchShape record.
struct BenchShapeFacts {
  std::string case_id;  // the case it measured
  ShapeResult shape = ShapeResultFromJson(nlohmann::json::object());
};
void to_json(nlohmann::json& j, const BenchShapeFacts& shape);
void from_json(const nlohmann::json& j, BenchShapeFacts& shape);

// The seed's perf_result.json, then our own details under "opverify".
nlohmann::ordered_json PerfResultJson(const OperatorBenchResult& result, const BenchConfig& settings);

}  // namespace opverify
