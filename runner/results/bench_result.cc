#include "runner/results/bench_result.h"

#include <cmath>
#include <cstdlib>
#include <map>

#include "runner/common/json_fields.h"
#include "runner/common/version.h"
#include "runner/results/perf_result.h"
#include "runner/results/verify_result.h"

namespace opverify {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

std::optional<double> OptionalNumber(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return std::nullopt;
  return object[key].get<double>();
}

json OrNull(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

}  // namespace

namespace {

json SideToJson(const SideResult& side) {
  return {{"measured", side.measured},
          {"latency_ms", OrNull(side.latency_ms)},
          {"stats", side.stats},
          {"peak_memory_mb", OrNull(side.peak_memory_mb)},
          {"added_memory_mb", OrNull(side.added_memory_mb)},
          {"operators", side.operators}};
}

SideResult SideFromJson(const json& j) {
  SideResult side;
  if (!j.is_object()) return side;
  side.measured = j.value("measured", false);
  side.latency_ms = OptionalNumber(j, "latency_ms");
  side.stats = j.value("stats", json());
  side.peak_memory_mb = OptionalNumber(j, "peak_memory_mb");
  side.added_memory_mb = OptionalNumber(j, "added_memory_mb");
  side.operators = j.value("operators", json::object());
  return side;
}

}  // namespace

json ShapeResultToJson(const ShapeResult& shape) {
  return {{"case_idx", shape.case_idx},
          {"input_desc", shape.input_desc},
          {"input_dtypes", shape.input_dtypes},
          {"passed", shape.passed},
          {"framework", SideToJson(shape.framework)},
          {"implementation", SideToJson(shape.implementation)},
          // JSON has no NaN or infinity: an anomalous speedup is kept as its text.
          {"speedup", !shape.speedup ? json(nullptr)
                                     : std::isfinite(*shape.speedup) ? json(*shape.speedup)
                                                                     : json(std::to_string(*shape.speedup))},
          {"roofline_ms", OrNull(shape.roofline_ms)},
          {"above_roofline", shape.above_roofline},
          {"error_type", shape.error_type},
          {"error_msg", shape.error_msg},
          {"warnings", shape.warnings}};
}

ShapeResult ShapeResultFromJson(const json& j) {
  ShapeResult shape;
  shape.case_idx = j.value("case_idx", 0);
  shape.input_desc = j.value("input_desc", json::array());
  shape.input_dtypes = j.value("input_dtypes", std::vector<std::string>());
  shape.passed = j.value("passed", false);
  shape.framework = SideFromJson(j.value("framework", json()));
  shape.implementation = SideFromJson(j.value("implementation", json()));
  if (j.contains("speedup") && j["speedup"].is_number()) {
    shape.speedup = j["speedup"].get<double>();
  } else if (j.contains("speedup") && j["speedup"].is_string()) {
    shape.speedup = std::strtod(j["speedup"].get<std::string>().c_str(), nullptr);  // "nan", "inf", "-inf"
  }
  shape.error_type = j.value("error_type", "");
  shape.error_msg = j.value("error_msg", "");
  shape.warnings = j.value("warnings", std::vector<std::string>());
  shape.roofline_ms = OptionalNumber(j, "roofline_ms");
  shape.above_roofline = j.value("above_roofline", false);
  return shape;
}

namespace {

ordered_json SideJson(const SideResult& side, bool per_shape) {
  ordered_json out;
  out["avg_latency_ms"] = OrNull(side.latency_ms);
  out["peak_memory_mb"] = OrNull(side.peak_memory_mb);
  if (per_shape) {
    out["added_memory_mb"] = OrNull(side.added_memory_mb);
    out["stats"] = side.stats.is_object() ? ordered_json::parse(side.stats.dump()) : ordered_json(nullptr);
    out["operators"] = ordered_json::parse(side.operators.dump());
  }
  return out;
}

// The top level's framework / implementation: the arithmetic mean of the
// shapes' latencies (the seed's "compatible" meaning), the largest peak, and
// each kernel's mean time over the measured shapes.
ordered_json AggregateSide(const std::vector<const SideResult*>& sides) {
  double latency_sum = 0;
  int latency_n = 0, measured = 0;
  std::optional<double> peak;
  std::map<std::string, double> operators;
  for (const SideResult* side : sides) {
    if (!side->measured) continue;
    ++measured;
    if (side->latency_ms) {
      latency_sum += *side->latency_ms;
      ++latency_n;
    }
    if (side->peak_memory_mb) peak = std::max(peak.value_or(0.0), *side->peak_memory_mb);
    for (const auto& [name, ms] : side->operators.items()) {
      if (ms.is_number()) operators[name] += ms.get<double>();
    }
  }
  ordered_json out;
  out["avg_latency_ms"] = latency_n > 0 ? ordered_json(latency_sum / latency_n) : ordered_json(nullptr);
  out["peak_memory_mb"] = peak ? ordered_json(*peak) : ordered_json(nullptr);
  ordered_json ops = ordered_json::object();
  for (const auto& [name, ms] : operators) ops[name] = ms / measured;
  out["operators"] = std::move(ops);
  return out;
}

}  // namespace

ordered_json PerfResultJson(const OperatorBenchResult& result, const BenchConfig& settings) {
  int passed = 0;
  std::vector<std::pair<int, std::optional<double>>> speedups;
  std::vector<const SideResult*> frameworks, implementations;
  for (const ShapeResult& shape : result.shapes) {
    if (!shape.passed) continue;
    ++passed;
    speedups.emplace_back(shape.case_idx, shape.speedup);
    frameworks.push_back(&shape.framework);
    implementations.push_back(&shape.implementation);
  }
  const SpeedupOverall overall = ComputeOverall(speedups);
  ordered_json out;
  out["op_name"] = result.op_name;
  out["warmup"] = settings.warmup;
  out["repeats"] = settings.timing.repeats;
  out["total_cases"] = result.shapes.size();
  out["passed_cases"] = passed;
  out["failed_cases"] = static_cast<int>(result.shapes.size()) - passed;
  out["nan_indices"] = overall.nan_indices;
  out["inf_indices"] = overall.inf_indices;
  out["zero_indices"] = overall.zero_indices;
  out["negative_indices"] = overall.negative_indices;
  out["none_indices"] = overall.none_indices;
  out["framework"] = AggregateSide(frameworks);
  if (settings.skip_framework) out["framework"]["avg_latency_ms"] = OrNull(settings.framework_latency_ms);
  out["implementation"] = AggregateSide(implementations);
  out["speedup_vs_torch"] = overall.geomean ? ordered_json(*overall.geomean) : ordered_json(nullptr);
  ordered_json shapes = ordered_json::array();
  std::vector<std::string> review;
  for (const ShapeResult& shape : result.shapes) {
    ordered_json s;
    s["case_idx"] = shape.case_idx;
    s["input_desc"] = SeedInputDesc(shape.input_desc);
    s["status"] = shape.passed ? "pass" : "fail";
    s["framework"] = SideJson(shape.framework, true);
    if (settings.skip_framework) s["framework"]["avg_latency_ms"] = OrNull(settings.framework_latency_ms);
    s["implementation"] = SideJson(shape.implementation, true);
    // Only a finite positive speedup is written; the anomalies are null, as in the seed.
    const bool valid = shape.passed && shape.speedup && std::isfinite(*shape.speedup) && *shape.speedup > 0;
    s["speedup_vs_torch"] = valid ? ordered_json(*shape.speedup) : ordered_json(nullptr);
    s["error_type"] = shape.error_type.empty() ? ordered_json(nullptr) : ordered_json(shape.error_type);
    s["error_msg"] = shape.error_msg.empty() ? ordered_json(nullptr) : ordered_json(shape.error_msg);
    s["input_dtypes"] = shape.input_dtypes;
    s["warnings"] = shape.warnings;
    s["roofline_ms"] = OrNull(shape.roofline_ms);
    if (valid && *shape.speedup > settings.review_speedup) review.push_back("shape " + std::to_string(shape.case_idx));
    if (shape.above_roofline) {
      review.push_back("shape " + std::to_string(shape.case_idx) + ": faster than the device's memory roofline");
    }
    shapes.push_back(std::move(s));
  }
  out["per_shape_results"] = std::move(shapes);
  out["environment"] = ordered_json::parse(result.environment.dump());
  ordered_json ours;
  ours["settings"] = ordered_json::parse(settings.ToJson().dump());
  const bool on_cpu = result.environment.is_object() && result.environment.contains("device") &&
                      result.environment["device"].is_object() &&
                      result.environment["device"].value("backend", "") == "cpu";
  ours["timing"] = on_cpu ? "monotonic clock around each forward; avg_latency_ms is the median of the repeats"
                          : "device events after a full synchronize, the L2 cache flushed before each repeat; "
                            "avg_latency_ms is the median of the repeats";
  ours["clock"] = ordered_json::parse(result.clock.dump());
  ours["review"] = review;
  if (overall.geomean && *overall.geomean > settings.review_speedup) {
    ours["review"].push_back("operator speedup " + std::to_string(*overall.geomean) + "x is above " +
                             std::to_string(settings.review_speedup) + "x");
  }
  ours["warnings"] = result.warnings;
  ours["wall_s"] = result.wall_s;
  ours["version"] = Version();
  ours["commit"] = GitCommit();
  out["opverify"] = std::move(ours);
  return out;
}

void to_json(json& j, const BenchConfig& config) { j = config.ToJson(); }
void from_json(const json& j, BenchConfig& config) { config = BenchConfig::FromJson(j); }

void to_json(json& j, const ShapeResult& shape) { j = ShapeResultToJson(shape); }
void from_json(const json& j, ShapeResult& shape) { shape = ShapeResultFromJson(j); }

namespace {

template <typename Field, typename Item>
void BenchItemFields(const Field& field, Item& item) {
  field("settings", item.settings);
  field("clock", item.clock);
  field("environment", item.environment);
  field("wall_s", item.wall_s);
  field("shapes", item.shapes);
}

template <typename Field, typename Shape>
void BenchShapeFields(const Field& field, Shape& shape) {
  field("case_id", shape.case_id);
  field("shape", shape.shape);
}

}  // namespace

void to_json(json& j, const BenchItemFacts& item) {
  j = json::object();
  BenchItemFields(json_fields::FieldWriter{j}, item);
}
void from_json(const json& j, BenchItemFacts& item) {
  BenchItemFields(json_fields::FieldReader{j}, item);
}

void to_json(json& j, const BenchShapeFacts& shape) {
  j = json::object();
  BenchShapeFields(json_fields::FieldWriter{j}, shape);
}
void from_json(const json& j, BenchShapeFacts& shape) {
  BenchShapeFields(json_fields::FieldReader{j}, shape);
}

}  // namespace opverify
