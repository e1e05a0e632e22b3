#include "runner/judge/standards.h"

#include <array>
#include <cmath>
#include <utility>

namespace opverify {
namespace {

constexpr double Pow2(int e) {
  double v = 1.0;
  for (int i = 0; i < (e < 0 ? -e : e); ++i) v = e < 0 ? v / 2 : v * 2;
  return v;
}

bool IsHifloat32(DType dtype, PrecisionMode mode) {
  return dtype == DType::kFloat32 && mode != PrecisionMode::kNone;
}

template <typename Enum, std::size_t N>
std::optional<Enum> Lookup(const std::array<std::pair<std::string_view, Enum>, N>& table,
                           std::string_view name) {
  for (const auto& [text, value] : table) {
    if (text == name) return value;
  }
  return std::nullopt;
}

template <typename Enum, std::size_t N>
std::string_view NameOf(const std::array<std::pair<std::string_view, Enum>, N>& table,
                        Enum value) {
  for (const auto& [text, v] : table) {
    if (v == value) return text;
  }
  return "unknown";
}

constexpr std::array<std::pair<std::string_view, Standard>, 4> kStandards = {{
    {"eco", Standard::kEco},
    {"npu_benchmark", Standard::kNpuBenchmark},
    {"mere_mare", Standard::kMereMare},
    {"strict", Standard::kStrict},
}};

constexpr std::array<std::pair<std::string_view, InputType>, 4> kInputTypes = {{
    {"unknown", InputType::kUnknown},
    {"float", InputType::kFloat},
    {"int", InputType::kInt},
    {"no_tensor", InputType::kNoTensor},
}};

constexpr std::array<std::pair<std::string_view, PrecisionMode>, 3> kPrecisionModes = {{
    {"none", PrecisionMode::kNone},
    {"hf32", PrecisionMode::kHF32},
    {"tf32", PrecisionMode::kTF32},
}};

constexpr std::array<std::pair<std::string_view, Route>, 7> kRoutes = {{
    {"bitwise", Route::kBitwise},
    {"exact", Route::kExact},
    {"quant", Route::kQuant},
    {"eco", Route::kEco},
    {"npu_benchmark", Route::kNpuBenchmark},
    {"mere_mare", Route::kMereMare},
    {"strict", Route::kStrict},
}};

}  // namespace

std::string_view StandardName(Standard standard) { return NameOf(kStandards, standard); }
std::optional<Standard> ParseStandard(std::string_view name) { return Lookup(kStandards, name); }
std::string_view InputTypeName(InputType input_type) { return NameOf(kInputTypes, input_type); }
std::optional<InputType> ParseInputType(std::string_view name) {
  return Lookup(kInputTypes, name);
}
std::string_view PrecisionModeName(PrecisionMode mode) { return NameOf(kPrecisionModes, mode); }
std::optional<PrecisionMode> ParsePrecisionMode(std::string_view name) {
  return Lookup(kPrecisionModes, name);
}
std::string_view RouteName(Route route) { return NameOf(kRoutes, route); }

std::optional<EcoThresholds> EcoThresholdsFor(DType dtype, PrecisionMode mode) {
  if (IsHifloat32(dtype, mode)) return EcoThresholds{Pow2(-9), Pow2(-10), 1e-1};
  switch (dtype) {
    case DType::kFloat16:
      return EcoThresholds{Pow2(-9), Pow2(-9), 1e-1};
    case DType::kBFloat16:
      return EcoThresholds{Pow2(-6), Pow2(-6), 1.0};
    case DType::kFloat32:
      return EcoThresholds{Pow2(-10), Pow2(-16), 1e-2};
    case DType::kFloat8E4M3FN:
      return EcoThresholds{Pow2(-2), Pow2(-4), 1.0};
    case DType::kFloat8E5M2:
      return EcoThresholds{Pow2(-1), Pow2(-3), 1e-1};
    default:
      return std::nullopt;
  }
}

NpuThresholds NpuThresholdsFor(DType dtype, PrecisionMode mode) {
  // complex32 (beyond the spec's dtypes) is two float16 parts: float16's row, as
  // complex64's parts take float32's (the "any other" row is float32's).
  if (dtype == DType::kComplex32) dtype = DType::kFloat16;
  if (IsHifloat32(dtype, mode)) return {Pow2(-12), Pow2(-28), Pow2(-11), 1e-3, Pow2(-13)};
  switch (dtype) {
    case DType::kFloat16:
      return {Pow2(-11), Pow2(-16), Pow2(-10), 9e-2, Pow2(-10)};
    case DType::kBFloat16:
      return {Pow2(-8), Pow2(-16), Pow2(-7), 1e-1, Pow2(-7)};
    case DType::kFloat8E4M3FN:
      return {Pow2(-4), Pow2(-6), Pow2(-3), 1e-3, Pow2(-13)};
    case DType::kFloat8E5M2:
      return {Pow2(-3), Pow2(-5), Pow2(-2), 1e-3, Pow2(-13)};
    default:  // float32, and any other float (float64, complex parts)
      return {Pow2(-14), Pow2(-30), Pow2(-13), 1e-3, Pow2(-13)};
  }
}

double MereMareThresholdFor(DType dtype, PrecisionMode mode) {
  if (dtype == DType::kComplex32) dtype = DType::kFloat16;  // its parts' (NpuThresholdsFor)
  if (IsHifloat32(dtype, mode)) return Pow2(-11);
  switch (dtype) {
    case DType::kFloat16:
      return Pow2(-10);
    case DType::kBFloat16:
      return Pow2(-7);
    case DType::kFloat8E4M3FN:
      return Pow2(-3);
    case DType::kFloat8E5M2:
      return Pow2(-2);
    default:
      return Pow2(-13);
  }
}

Route SelectRoute(DType golden, Standard standard, InputType input_type, bool non_compute) {
  if (non_compute) return Route::kBitwise;
  if (golden == DType::kBool) return Route::kExact;
  if (IsInteger(golden)) {
    if (standard == Standard::kMereMare || standard == Standard::kStrict) return Route::kExact;
    return input_type == InputType::kFloat ? Route::kQuant : Route::kExact;
  }
  switch (standard) {
    case Standard::kEco:
      return EcoThresholdsFor(golden, PrecisionMode::kNone) ? Route::kEco : Route::kNpuBenchmark;
    case Standard::kNpuBenchmark:
      return Route::kNpuBenchmark;
    case Standard::kMereMare:
      return Route::kMereMare;
    case Standard::kStrict:
      return Route::kStrict;
  }
  return Route::kEco;
}

InputType InferInputType(const std::vector<DType>& input_dtypes) {
  if (input_dtypes.empty()) return InputType::kNoTensor;
  DType best = input_dtypes.front();
  for (DType dtype : input_dtypes) {
    if (PrecisionRank(dtype) > PrecisionRank(best)) best = dtype;
  }
  return IsFloat(best) || IsComplex(best) ? InputType::kFloat : InputType::kInt;
}

}  // namespace opverify
