#include "runner/judge/verdict_json.h"

#include <cmath>

#include "runner/common/strings.h"

namespace opverify {

using nlohmann::json;

json JsonNumber(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

json MetricsToJson(const OutputMetrics& m) {
  json out = {
      {"total", m.total},
      {"total_finite", m.total_finite},
      {"nan_count", m.nan_count},
      {"inf_count", m.inf_count},
      {"max_abs_diff", JsonNumber(m.max_abs_diff)},
      {"max_rel_diff", JsonNumber(m.max_rel_diff)},
  };
  if (m.is_float) {
    if (m.eco) {
      const EcoMetrics& e = *m.eco;
      out["eco"] = {
          {"matched_ratio", e.matched_ratio},
          {"over_count", e.over_count},
          {"rtol", e.thresholds.rtol},
          {"atol", e.thresholds.atol},
          {"max_abs_error_limit", e.thresholds.max_abs_error_limit},
          {"passed", e.passed},
      };
    }
    const NpuBenchmarkMetrics& n = m.npu_benchmark;
    out["npu_benchmark"] = {
        {"matched_ratio", n.matched_ratio},
        {"MERE", JsonNumber(n.mere)},
        {"max_error_cap_violation_count", n.max_error_cap_violation_count},
        {"small_count", n.small_count},
        {"normal_count", n.normal_count},
        {"small_value_threshold", n.thresholds.small_value_threshold},
        {"small_value_error", n.thresholds.small_value_error},
        {"rel_threshold", n.thresholds.rel_threshold},
        {"atol", n.thresholds.cap_atol},
        {"rtol", n.thresholds.cap_rtol},
        {"checks",
         {{"max_error_cap", n.max_error_cap_passed},
          {"required_matched_ratio", n.matched_ratio_passed},
          {"MERE", n.mere_passed}}},
        {"passed", n.passed},
    };
    out["mere_mare"] = {
        {"MERE", JsonNumber(m.mere_mare.mere)},
        {"MARE", JsonNumber(m.mere_mare.mare)},
        {"threshold", m.mere_mare.threshold},
        {"passed", m.mere_mare.passed},
    };
  }
  if (m.discrete) {
    out["discrete"] = {
        {"category", m.discrete->category},
        {"violation_count", m.discrete->violation_count},
        {"max_allowed_diff", m.discrete->max_allowed_diff},
        {"passed", m.discrete->passed},
    };
  }
  return out;
}

json VerdictToJson(const Verdict& v) {
  json worst = json::array();
  for (const WorstElement& w : v.worst) {
    json item = {
        {"index", w.index},
        {"golden", JsonNumber(w.golden)},
        {"actual", JsonNumber(w.actual)},
        {"abs_diff", JsonNumber(w.abs_diff)},
        {"rel_diff", JsonNumber(w.rel_diff)},
    };
    if (!w.part.empty()) item["part"] = w.part;
    worst.push_back(std::move(item));
  }
  json out = {
      {"passed", v.passed},
      {"route", RouteName(v.route)},
      {"error_type", v.error_type == ErrorType::kNone ? json(nullptr)
                                                       : json(ErrorTypeName(v.error_type))},
      {"error_msg", v.error_msg.empty() ? json(nullptr) : json(v.error_msg)},
      {"warnings", v.warnings},
      {"standard", StandardName(v.options.standard)},
      {"input_type", InputTypeName(v.options.input_type)},
      {"non_compute", v.options.non_compute},
      {"precision_mode", v.options.precision_mode == PrecisionMode::kNone
                             ? json(nullptr)
                             : json(PrecisionModeName(v.options.precision_mode))},
      {"dtype", DTypeName(v.dtype)},
      {"actual_dtype", DTypeName(v.actual_dtype)},
      {"shape", v.shape},
      {"actual_shape", v.actual_shape},
      {"metrics", v.error_type == ErrorType::kShapeMismatch ? json(nullptr)
                                                            : MetricsToJson(v.metrics)},
      {"worst", std::move(worst)},
  };
  if (!v.parts.empty()) {
    json parts = json::object();
    for (const auto& [name, metrics] : v.parts) parts[name] = MetricsToJson(metrics);
    out["parts"] = std::move(parts);
  }
  return out;
}

namespace {

std::string Mark(bool passed) { return passed ? "pass" : "FAIL"; }

}  // namespace

std::string VerdictSummary(const Verdict& v) {
  const OutputMetrics& m = v.metrics;
  std::string out = Printf("%s  route %s  %s %s  (%lld elements)\n", v.passed ? "PASS" : "FAIL",
                           std::string(RouteName(v.route)).c_str(), std::string(DTypeName(v.dtype)).c_str(),
                           ShapeToString(v.shape).c_str(), static_cast<long long>(m.total));
  if (!v.passed) {
    out += "  " + std::string(ErrorTypeName(v.error_type)) + ": " + v.error_msg + "\n";
  }
  for (const auto& warning : v.warnings) {
    out += "  warning: " + warning;
    if (warning == "dtype_mismatch") {
      out += " (actual " + std::string(DTypeName(v.actual_dtype)) + " cast to " +
             std::string(DTypeName(v.dtype)) + ")";
    }
    out += "\n";
  }
  if (v.error_type == ErrorType::kShapeMismatch) return out;
  out += Printf("  finite %lld, NaN %lld, Inf %lld, max |diff| %.3g, max rel %.3g\n",
                static_cast<long long>(m.total_finite), static_cast<long long>(m.nan_count),
                static_cast<long long>(m.inf_count), m.max_abs_diff, m.max_rel_diff);
  if (m.is_float) {
    if (m.eco) {
      out += Printf("  eco            matched %.4f%% (>= 99%%), over %lld  %s\n", 100 * m.eco->matched_ratio,
                    static_cast<long long>(m.eco->over_count), Mark(m.eco->passed).c_str());
    }
    const auto& n = m.npu_benchmark;
    out += Printf("  npu_benchmark  matched %.4f%% (>= 90%%), MERE %.3g (< %.3g), cap violations %lld  %s\n",
                  100 * n.matched_ratio, n.mere, n.thresholds.rel_threshold,
                  static_cast<long long>(n.max_error_cap_violation_count), Mark(n.passed).c_str());
    const auto& mm = m.mere_mare;
    out += Printf("  mere_mare      MERE %.3g (< %.3g), MARE %.3g (< %.3g)  %s\n", mm.mere, mm.threshold,
                  mm.mare, 10 * mm.threshold, Mark(mm.passed).c_str());
  }
  if (m.discrete) {
    out += Printf("  %s  violations %lld  %s\n", std::string(RouteName(v.route)).c_str(),
                  static_cast<long long>(m.discrete->violation_count), Mark(m.discrete->passed).c_str());
  }
  if (!v.worst.empty()) {
    out += "  worst:\n";
    for (const WorstElement& w : v.worst) {
      out += Printf("    [%lld%s%s] golden %.9g  actual %.9g  |diff| %.3g\n", static_cast<long long>(w.index),
                    w.part.empty() ? "" : " ", w.part.c_str(), w.golden, w.actual, w.abs_diff);
    }
  }
  return out;
}

}  // namespace opverify
