// The precision judge: one golden/actual tensor pair in, one Verdict out.
//
// Judge() applies PRECISION.md exactly: pre-checks (shape, NaN mask, Inf mask
// and sign), the route chosen by dtype, input type, standard and the
// non_compute flag, and every metric of every standard for float outputs. It
// reads each tensor once, in blocks, computing differences and bounds in
// float64, on several threads for large tensors, without full-size
// temporaries. It never throws for data it can judge: a mismatch is a Verdict.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/judge/standards.h"
#include "runner/tensor/tensor_view.h"

namespace opverify {

struct JudgeOptions {
  Standard standard = Standard::kEco;
  InputType input_type = InputType::kUnknown;
  bool non_compute = false;
  PrecisionMode precision_mode = PrecisionMode::kNone;
  int worst_count = 8;  // worst elements reported
  int threads = 0;      // 0: as many as the machine has, for large tensors
};

enum class ErrorType { kNone, kAccuracyError, kShapeMismatch, kNaNMismatch, kInfMismatch };
std::string_view ErrorTypeName(ErrorType error_type);  // "AccuracyError", ... ; kNone: ""

// One element worth a person's look. `index` is the flat C-order index.
struct WorstElement {
  std::int64_t index = 0;
  double golden = 0;
  double actual = 0;
  double abs_diff = 0;
  double rel_diff = 0;  // d / max(|G|, T), T of the mere_mare standard
  std::string part;     // "real" / "imag" for complex outputs, else empty
};

struct EcoMetrics {
  double matched_ratio = 1;
  std::int64_t matched_count = 0;
  std::int64_t over_count = 0;
  EcoThresholds thresholds{};
  bool passed = true;
};

struct NpuBenchmarkMetrics {
  double matched_ratio = 1;
  std::int64_t matched_count = 0;
  double mere = 0;  // mean(d / (|G| + 1e-7))
  std::int64_t max_error_cap_violation_count = 0;
  std::int64_t small_count = 0;
  std::int64_t normal_count = 0;
  NpuThresholds thresholds{};
  bool max_error_cap_passed = true;
  bool matched_ratio_passed = true;
  bool mere_passed = true;
  bool passed = true;
};

struct MereMareMetrics {
  double mere = 0;  // mean(d / max(|G|, T))
  double mare = 0;  // max(d / max(|G|, T))
  double threshold = 0;
  bool passed = true;
};

// The count of a discrete route (bitwise, exact, quant).
struct DiscreteMetrics {
  // The seed's category: non_compute, bool_output, integer_compute, quant_fp_to_int.
  std::string category;
  std::int64_t violation_count = 0;
  double max_allowed_diff = 0;  // quant 1, exact 0; bitwise compares bits
  bool passed = true;
};

struct OutputMetrics {
  std::int64_t total = 0;
  std::int64_t total_finite = 0;  // both sides finite
  std::int64_t nan_count = 0;     // either side NaN
  std::int64_t inf_count = 0;     // either side infinite, neither NaN
  double max_abs_diff = 0;
  double max_rel_diff = 0;  // max(d / (|G| + 1e-7))
  bool is_float = false;    // the float blocks below are filled
  std::optional<EcoMetrics> eco;  // absent outside the eco table
  NpuBenchmarkMetrics npu_benchmark;
  MereMareMetrics mere_mare;
  std::optional<DiscreteMetrics> discrete;  // bitwise / exact / quant routes
  std::int64_t nan_mismatch_count = 0;
  std::int64_t inf_mismatch_count = 0;
};

struct Verdict {
  bool passed = false;
  Route route = Route::kEco;
  ErrorType error_type = ErrorType::kNone;
  std::string error_msg;              // why it failed, in one line; empty when passed
  std::vector<std::string> warnings;  // e.g. "dtype_mismatch"
  DType dtype = DType::kFloat32;      // the golden's
  DType actual_dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> actual_shape;
  OutputMetrics metrics;  // complex: both parts combined (see parts)
  std::vector<std::pair<std::string, OutputMetrics>> parts;  // complex: "real", "imag"
  std::vector<WorstElement> worst;
  JudgeOptions options;
};

Verdict Judge(const TensorView& golden, const TensorView& actual, const JudgeOptions& options);

}  // namespace opverify
