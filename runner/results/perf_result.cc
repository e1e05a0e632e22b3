#include "runner/results/perf_result.h"

#include <cmath>

#include "runner/common/user_file.h"
#include "runner/common/utf8.h"

namespace opverify {

using nlohmann::json;

constexpr std::size_t kMaxVerifyResultBytes = 256u << 20;  // a larger one is refused, not parsed

VerifyGate CheckVerifyGate(const std::string& verify_file) {
  VerifyGate gate;
  gate.verify_file = verify_file;
  const Result<std::string> text =
      ReadUserFile(verify_file, "verify result", kMaxVerifyResultBytes);
  if (!text.ok()) {
    gate.reason = text.status().code() == Status::Code::kNotFound
                      ? verify_file + ": no verify result (run opverify verify first)"
                      : text.status().message();
    return gate;
  }
  json result = json::parse(text.value(), nullptr, /*allow_exceptions=*/false);
  if (result.is_discarded() || !result.is_object()) {
    gate.reason = verify_file + ": not a readable verify result (malformed JSON)";
    return gate;
  }
  // An integer, or a float with an integer value (4.0), as Python compares them.
  const auto count = [&](const char* key) -> std::optional<long long> {
    if (!result.contains(key) || !result[key].is_number()) return std::nullopt;
    if (result[key].is_number_integer()) return result[key].get<long long>();
    const double value = result[key].get<double>();
    if (!std::isfinite(value) || std::floor(value) != value || std::fabs(value) > 1e15) return std::nullopt;
    return static_cast<long long>(value);
  };
  const auto total = count("total_cases");
  const auto passed = count("passed_cases");
  if (!total || !passed) {
    gate.reason = verify_file + ": total_cases or passed_cases is missing or not an integer";
    return gate;
  }
  if (*total == 0) {
    gate.reason = verify_file + ": total_cases is 0 (verify ran no case)";
    return gate;
  }
  if (*passed > *total) {
    gate.reason = verify_file + ": passed_cases " + std::to_string(*passed) + " is more than total_cases " +
                  std::to_string(*total) + " (not a result opverify verify writes)";
    return gate;
  }
  if (*passed < *total) {
    std::string first;
    int shown = 0;
    for (const auto& failure : result.value("failures", json::array())) {
      if (shown++ == 5) break;
      first += "\n  case " + (failure.contains("case_idx") ? failure["case_idx"].dump() : std::string("?")) + ": " +
               failure.value("error_type", std::string("?")) + ": " +
               Utf8Prefix(failure.value("error_msg", std::string()), 300);
    }
    gate.reason = verify_file + ": " + std::to_string(*passed) + "/" + std::to_string(*total) +
                  " cases passed; benchmarking an implementation that is not correct is meaningless" +
                  (first.empty() ? "" : "\nfirst failures:" + first);
    return gate;
  }
  gate.open = true;
  return gate;
}

std::string PerfResultFileName(const std::string& impl_name) {
  if (impl_name == "triton_ascend_impl") return "perf_result.json";
  const std::string prefix = "triton_";
  if (impl_name.rfind(prefix, 0) == 0) return "perf_result_" + impl_name.substr(prefix.size()) + ".json";
  return "perf_result_" + impl_name + ".json";
}

std::optional<double> GeometricMean(const std::vector<double>& values) {
  double log_sum = 0;
  int n = 0;
  for (double v : values) {
    if (!std::isfinite(v) || v <= 0) continue;
    log_sum += std::log(v);
    ++n;
  }
  if (n == 0) return std::nullopt;
  return std::exp(log_sum / n);
}

SpeedupOverall ComputeOverall(const std::vector<std::pair<int, std::optional<double>>>& speedups) {
  SpeedupOverall overall;
  std::vector<double> valid;
  for (const auto& [case_idx, s] : speedups) {
    if (!s) {
      overall.none_indices.push_back(case_idx);
    } else if (std::isnan(*s)) {
      overall.nan_indices.push_back(case_idx);
    } else if (std::isinf(*s)) {
      overall.inf_indices.push_back(case_idx);
    } else if (*s < 0) {
      overall.negative_indices.push_back(case_idx);
    } else if (*s == 0) {
      overall.zero_indices.push_back(case_idx);
    } else {
      valid.push_back(*s);
    }
  }
  overall.valid = static_cast<int>(valid.size());
  overall.geomean = GeometricMean(valid);
  return overall;
}

}  // namespace opverify
