// The precision standards of PRECISION.md as plain tables and pure functions:
// which route an output takes, and the thresholds of each standard per dtype.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "runner/tensor/dtype.h"

namespace opverify {

// The standard a job chooses (PRECISION.md "Standards a job can choose").
enum class Standard { kEco, kNpuBenchmark, kMereMare, kStrict };

// The operator's input type (PRECISION.md "Input type"). kUnknown is what a
// bare tensor comparison has; it routes integer outputs like kNoTensor (the
// strictest path, exact equality).
enum class InputType { kUnknown, kFloat, kInt, kNoTensor };

// Ascend HF32 / NVIDIA TF32: float32 outputs use the hifloat32 rows.
enum class PrecisionMode { kNone, kHF32, kTF32 };

// The rule set that decides an output.
enum class Route {
  kBitwise,       // non_compute: raw bits identical
  kExact,         // bool, or integer from int/no_tensor input: every d == 0
  kQuant,         // integer from float input: every d <= 1
  kEco,           // eco matched ratio and over count
  kNpuBenchmark,  // cap, matched ratio, MERE
  kMereMare,      // seed 003's MERE and MARE
  kStrict,        // the eco routing (eco or npu_benchmark) AND mere_mare
};

std::string_view StandardName(Standard standard);
std::optional<Standard> ParseStandard(std::string_view name);
std::string_view InputTypeName(InputType input_type);
std::optional<InputType> ParseInputType(std::string_view name);
std::string_view PrecisionModeName(PrecisionMode mode);
std::optional<PrecisionMode> ParsePrecisionMode(std::string_view name);
std::string_view RouteName(Route route);

struct EcoThresholds {
  double rtol;
  double atol;
  double max_abs_error_limit;
};

struct NpuThresholds {
  double small_value_threshold;
  double small_value_error;
  double rel_threshold;  // also the MERE bound
  double cap_atol;
  double cap_rtol;
};

// The eco row of a real float dtype; nullopt for dtypes outside the eco table
// (float64). float32 under hf32/tf32 takes the hifloat32 row.
std::optional<EcoThresholds> EcoThresholdsFor(DType dtype, PrecisionMode mode);
NpuThresholds NpuThresholdsFor(DType dtype, PrecisionMode mode);
// T of the MERE/MARE standard (pass: MERE < T and MARE < 10 T).
double MereMareThresholdFor(DType dtype, PrecisionMode mode);

constexpr double kEcoRequiredMatchedRatio = 0.99;
constexpr double kNpuRequiredMatchedRatio = 0.9;
constexpr double kNpuRelativeEpsilon = 1e-7;  // d / (|G| + 1e-7)
constexpr int kEcoUlpFactor = 32;             // 32 * ULP(|G|)
constexpr double kMareFactor = 10.0;          // MARE < 10 T

// The route of an output whose golden dtype is `golden` (complex dtypes
// themselves, not their parts: complex is outside the eco table).
Route SelectRoute(DType golden, Standard standard, InputType input_type, bool non_compute);

// The input type of an operator from the dtypes of all its tensor inputs
// (tensors inside lists/tuples included); empty means no tensor input.
InputType InferInputType(const std::vector<DType>& input_dtypes);

}  // namespace opverify
