#include "runner/results/verify_result.h"

#include <cmath>
#include <cstdint>

#include "runner/common/failure_type.h"
#include "runner/common/utf8.h"
#include "runner/common/version.h"
#include "runner/judge/verdict_json.h"
#include "runner/results/waivers.h"

namespace opverify {

using nlohmann::ordered_json;

std::string VerifyResultFileName(const std::string& impl_name) {
  if (impl_name == "triton_ascend_impl") return "verify_result.json";
  const std::string prefix = "triton_";
  if (impl_name.rfind(prefix, 0) == 0) return "verify_result_" + impl_name.substr(prefix.size()) + ".json";
  return "verify_result_" + impl_name + ".json";
}

ordered_json FlatMetrics(const Verdict& v) {
  const OutputMetrics& m = v.metrics;
  ordered_json out;
  out["route"] = RouteName(v.route);
  if (m.discrete) {
    // The seed scripts' fields for each category, in their order.
    const std::string& category = m.discrete->category;
    out["category"] = category;
    out["dtype"] = "torch." + std::string(DTypeName(v.dtype));
    const bool counted = category == "quant_fp_to_int" || category == "integer_compute";
    if (counted) out["input_type"] = InputTypeName(v.options.input_type);
    const double d = m.max_abs_diff;
    const bool integral = std::isfinite(d) && std::floor(d) == d && d < 9.2e18;  // an integer output's difference
    if (integral) {
      out["max_abs_diff"] = static_cast<std::int64_t>(d);
    } else {
      out["max_abs_diff"] = JsonNumber(d);
    }
    out["violation_count"] = m.discrete->violation_count;
    out[category == "non_compute" ? "total_elements" : "total_finite"] = m.total;
    if (counted) out["tolerance"] = static_cast<int>(m.discrete->max_allowed_diff);
    return out;
  }
  const bool eco = m.eco && (v.route == Route::kEco || v.route == Route::kStrict);
  if (eco) {
    out["matched_ratio"] = m.eco->matched_ratio;
    out["max_abs_diff"] = JsonNumber(m.max_abs_diff);
    out["over_count"] = m.eco->over_count;
    out["rtol"] = m.eco->thresholds.rtol;
    out["atol"] = m.eco->thresholds.atol;
    out["max_abs_error_limit"] = m.eco->thresholds.max_abs_error_limit;
    out["required_matched_ratio"] = kEcoRequiredMatchedRatio;
    out["total_finite"] = m.total_finite;
    out["matched_count"] = m.eco->matched_count;
    out["checks"] = {{"required_matched_ratio", m.eco->matched_count * 100 >= m.total_finite * 99},
                     {"over_count", m.eco->over_count == 0}};
  } else if (v.route != Route::kMereMare) {
    const NpuBenchmarkMetrics& n = m.npu_benchmark;
    out["matched_ratio"] = n.matched_ratio;
    out["max_abs_diff"] = JsonNumber(m.max_abs_diff);
    out["MERE"] = JsonNumber(n.mere);
    out["rel_threshold"] = n.thresholds.rel_threshold;
    out["small_value_threshold"] = n.thresholds.small_value_threshold;
    out["small_value_error"] = n.thresholds.small_value_error;
    out["atol"] = n.thresholds.cap_atol;
    out["rtol"] = n.thresholds.cap_rtol;
    out["max_error_cap_violation_count"] = n.max_error_cap_violation_count;
    out["required_matched_ratio"] = kNpuRequiredMatchedRatio;
    out["total_finite"] = m.total_finite;
    out["matched_count"] = n.matched_count;
    out["small_count"] = n.small_count;
    out["normal_count"] = n.normal_count;
    out["checks"] = {{"max_error_cap", n.max_error_cap_passed},
                     {"required_matched_ratio", n.matched_ratio_passed},
                     {"MERE", n.mere_passed}};
  }
  if (v.route == Route::kMereMare || v.route == Route::kStrict) {
    ordered_json mm = {{"MERE", JsonNumber(m.mere_mare.mere)},
                       {"MARE", JsonNumber(m.mere_mare.mare)},
                       {"threshold", m.mere_mare.threshold},
                       {"passed", m.mere_mare.passed}};
    if (v.route == Route::kMereMare) {
      out["max_abs_diff"] = JsonNumber(m.max_abs_diff);
      out["total_finite"] = m.total_finite;
      for (auto& [key, value] : mm.items()) out[key] = value;
    } else {
      out["mere_mare"] = mm;
    }
  }
  return out;
}

ordered_json SeedInputDesc(const nlohmann::json& input_desc) {
  ordered_json out = ordered_json::array();
  if (!input_desc.is_array()) return out;
  for (const auto& input : input_desc) {
    if (!input.is_object()) {
      out.push_back(ordered_json::parse(input.dump()));
      continue;
    }
    ordered_json entry = ordered_json::object();
    for (const char* key : {"type", "shape", "dtype", "value"}) {
      if (input.contains(key)) entry[key] = ordered_json::parse(input[key].dump());
    }
    for (const auto& [key, value] : input.items()) {
      if (!entry.contains(key)) entry[key] = key == "items" ? SeedInputDesc(value) : ordered_json::parse(value.dump());
    }
    out.push_back(std::move(entry));
  }
  return out;
}

ordered_json FailureEntry(const CaseOutcome& c) {
  ordered_json failure;
  failure["case_idx"] = c.index + 1;
  failure["input_desc"] = SeedInputDesc(c.input_desc);
  if (!c.edge_label.empty()) failure["edge_case"] = c.edge_label;
  failure["error_type"] = c.error_type;
  failure["error_msg"] = CutMiddle(c.error_msg);
  if (FailureType::FromText(c.error_type) == FailureKind::kAccuracyError) {
    for (const Verdict& v : c.outputs) {
      if (!v.passed) {
        failure["metrics"] = FlatMetrics(v);
        break;
      }
    }
  }
  if (c.regression_type != 0) failure["regression_type"] = c.regression_type;
  return failure;
}

ordered_json CaseDetails(const CaseOutcome& c) {
  ordered_json details;
  details["case_idx"] = c.index + 1;
  details["passed"] = c.passed;
  details["verdict"] = !c.passed ? "failed" : c.waived() ? "waived" : "passed";
  if (!c.waivers.empty()) details["waivers"] = ordered_json::parse(c.waivers.dump());
  details["golden_device"] = c.golden_device;
  details["golden_precision"] = c.golden_precision;
  if (!c.edge_label.empty()) {
    details["edge_case"] = c.edge_label;
    details["edge_params"] = ordered_json::parse(c.edge_params.dump());
  }
  details["seed"] = c.seed;
  details["seeds"] = c.seeds;
  if (c.fallback_reason) details["golden_fallback_reason"] = *c.fallback_reason;
  details["warnings"] = c.warnings;
  details["timings_ms"] = ordered_json::parse(c.timings.dump());
  ordered_json outputs = ordered_json::array();
  for (const Verdict& v : c.outputs) outputs.push_back(ordered_json::parse(VerdictToJson(v).dump()));
  details["outputs"] = std::move(outputs);
  if (!c.probe.is_null()) details["hidden_state_probe"] = ordered_json::parse(c.probe.dump());
  if (!c.runtime_evidence.is_null()) details["runtime_evidence"] = ordered_json::parse(c.runtime_evidence.dump());
  return details;
}

ordered_json SeedVerifyResult(const SeedResultParts& parts, const VerifyContext& context) {
  ordered_json out;
  out["op_name"] = parts.op_name;
  out["total_cases"] = parts.total_cases;
  out["passed_cases"] = parts.passed_cases;
  out["failed_cases"] = parts.total_cases - parts.passed_cases;
  out["failures"] = parts.failures;
  // The seed's order: timestamp, triton, cache, cann (on every backend; then
  // cuda on cuda), torch, device; ours: sandbox (docs/SECURITY.md); cmdline.
  ordered_json environment = ordered_json::object();
  for (const char* key :
       {"timestamp", "triton", "cache", "cann", "cuda", "torch", "device", "sandbox"}) {
    if (parts.environment.is_object() && parts.environment.contains(key)) {
      environment[key] = ordered_json::parse(parts.environment[key].dump());
    }
  }
  if (environment.contains("cache") && environment["cache"].is_object()) {
    environment["cache"]["fresh"] = context.fresh_cache;
  } else {
    environment["cache"] = {{"dir", context.cache_dir}, {"fresh", context.fresh_cache}};
  }
  // cmdline.non_compute is the flag as given (the seed's); the effective
  // value, which a task's NON_COMPUTE may set, is ours beside it.
  environment["cmdline"] = {{"triton_impl_name", context.impl_name},
                            {"non_compute", parts.non_compute_given.value_or(parts.non_compute)},
                            {"non_compute_effective", parts.non_compute}};
  if (context.seed_compat) environment["cmdline"]["seed_compat"] = true;
  out["environment"] = std::move(environment);
  ordered_json ours;
  ours["lint"] = parts.lint.is_null() ? ordered_json(nullptr) : ordered_json::parse(parts.lint.dump());
  ours["waived_cases"] = parts.waived_cases;
  ours["allow_torch"] = parts.allow_torch;
  ours["cases"] = parts.details;
  ours["version"] = Version();
  ours["commit"] = GitCommit();
  out["opverify"] = std::move(ours);
  return out;
}

ordered_json VerifyResultJson(const OperatorOutcome& outcome, const VerifyContext& context) {
  SeedResultParts parts;
  parts.op_name = outcome.op_name;
  parts.total_cases = static_cast<int>(outcome.cases.size());
  parts.passed_cases = outcome.passed_cases();
  for (const CaseOutcome& c : outcome.cases) {
    parts.details.push_back(CaseDetails(c));
    if (!c.passed) parts.failures.push_back(FailureEntry(c));
  }
  parts.environment = outcome.environment;
  parts.lint = outcome.lint;
  parts.non_compute = outcome.non_compute;
  parts.non_compute_given = outcome.non_compute_given;
  parts.waived_cases = outcome.waived_cases();
  OperatorAllowances allowances{
      outcome.op_name, outcome.declared_allowances, outcome.allowances_checked(), {}};
  for (const CaseOutcome& c : outcome.cases) allowances.case_waivers.push_back(c.waivers);
  for (const AllowanceUse& use : AllowanceUses({allowances}))
    parts.allow_torch.push_back(AllowanceUseJson(use));
  return SeedVerifyResult(parts, context);
}

}  // namespace opverify
