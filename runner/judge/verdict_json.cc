#include "runner/judge/verdict_json.h"

#include <cmath>
#include <cstdio>
#include <sstream>

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

// printf-style formatting of one number with a literal format of this file.
std::string Fmt(const char* format, double value) {
  char buffer[64];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  std::snprintf(buffer, sizeof buffer, format, value);  // formats are literals of this file
#pragma GCC diagnostic pop
  return buffer;
}

std::string Mark(bool passed) { return passed ? "pass" : "FAIL"; }

}  // namespace

std::string VerdictSummary(const Verdict& v) {
  std::ostringstream out;
  const OutputMetrics& m = v.metrics;
  out << (v.passed ? "PASS" : "FAIL") << "  route " << RouteName(v.route) << "  "
      << DTypeName(v.dtype) << " " << ShapeToString(v.shape) << "  (" << m.total
      << " elements)\n";
  if (!v.passed) out << "  " << ErrorTypeName(v.error_type) << ": " << v.error_msg << "\n";
  for (const auto& warning : v.warnings) {
    out << "  warning: " << warning;
    if (warning == "dtype_mismatch") {
      out << " (actual " << DTypeName(v.actual_dtype) << " cast to " << DTypeName(v.dtype) << ")";
    }
    out << "\n";
  }
  if (v.error_type == ErrorType::kShapeMismatch) return out.str();
  out << "  finite " << m.total_finite << ", NaN " << m.nan_count << ", Inf " << m.inf_count
      << ", max |diff| " << Fmt("%.3g", m.max_abs_diff) << ", max rel " << Fmt("%.3g", m.max_rel_diff)
      << "\n";
  if (m.is_float) {
    if (m.eco) {
      out << "  eco            matched " << Fmt("%.4f%%", 100 * m.eco->matched_ratio)
          << " (>= 99%), over " << m.eco->over_count << "  " << Mark(m.eco->passed) << "\n";
    }
    const auto& n = m.npu_benchmark;
    out << "  npu_benchmark  matched " << Fmt("%.4f%%", 100 * n.matched_ratio) << " (>= 90%), MERE "
        << Fmt("%.3g", n.mere) << " (< " << Fmt("%.3g", n.thresholds.rel_threshold)
        << "), cap violations " << n.max_error_cap_violation_count << "  " << Mark(n.passed) << "\n";
    const auto& mm = m.mere_mare;
    out << "  mere_mare      MERE " << Fmt("%.3g", mm.mere) << " (< " << Fmt("%.3g", mm.threshold)
        << "), MARE " << Fmt("%.3g", mm.mare) << " (< " << Fmt("%.3g", 10 * mm.threshold) << ")  "
        << Mark(mm.passed) << "\n";
  }
  if (m.discrete) {
    out << "  " << RouteName(v.route) << "  violations " << m.discrete->violation_count << "  "
        << Mark(m.discrete->passed) << "\n";
  }
  if (!v.worst.empty()) {
    out << "  worst:\n";
    for (const WorstElement& w : v.worst) {
      out << "    [" << w.index << (w.part.empty() ? "" : " " + w.part) << "] golden "
          << Fmt("%.9g", w.golden) << "  actual " << Fmt("%.9g", w.actual) << "  |diff| "
          << Fmt("%.3g", w.abs_diff) << "\n";
    }
  }
  return out.str();
}

}  // namespace opverify
