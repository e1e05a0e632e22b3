// The seed's benchmark outputs and rules: the L1 verify gate, the overall
// speedup (a geometric mean over the valid shapes, with the five anomaly
// classes), and perf_result.json field for field.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace opverify {

// The L1 gate: the verify file the implementation's name maps to must exist,
// parse, and say passed_cases == total_cases > 0.
struct VerifyGate {
  bool open = false;
  std::string verify_file;
  std::string reason;  // why it is closed: printed with the first failures
};
VerifyGate CheckVerifyGate(const std::string& verify_file);

// perf_result.json for triton_ascend_impl, perf_result_<x>.json for triton_<x>
// (the default --output beside the verify file it was gated on).
std::string PerfResultFileName(const std::string& impl_name);

// compute_overall: each shape that passed has s_i = framework / implementation
// latency, or none. In this order of precedence, none, NaN, inf, negative
// and zero go to their index list (case_idx, from 1) and stay out of the
// geometric mean; the mean is over the finite positive rest, null if none.
struct SpeedupOverall {
  std::optional<double> geomean;
  int valid = 0;
  std::vector<int> nan_indices, inf_indices, zero_indices, negative_indices, none_indices;
};
SpeedupOverall ComputeOverall(const std::vector<std::pair<int, std::optional<double>>>& speedups);

// The geometric mean of positive finite values (nullopt when there are none).
std::optional<double> GeometricMean(const std::vector<double>& values);

}  // namespace opverify
