#include "runner/tensor/dtype.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace opverify {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DTypeInfo, 18> kInfos = {{
    {DType::kBool, "bool", 1},
    {DType::kInt8, "int8", 1},
    {DType::kInt16, "int16", 2},
    {DType::kInt32, "int32", 4},
    {DType::kInt64, "int64", 8},
    {DType::kUInt8, "uint8", 1},
    {DType::kUInt16, "uint16", 2},
    {DType::kUInt32, "uint32", 4},
    {DType::kUInt64, "uint64", 8},
    {DType::kFloat8E4M3FN, "float8_e4m3fn", 1},
    {DType::kFloat8E5M2, "float8_e5m2", 1},
    {DType::kBFloat16, "bfloat16", 2},
    {DType::kFloat16, "float16", 2},
    {DType::kFloat32, "float32", 4},
    {DType::kFloat64, "float64", 8},
    {DType::kComplex64, "complex64", 8},
    {DType::kComplex128, "complex128", 16},
    {DType::kComplex32, "complex32", 4},
}};

const DTypeInfo& Info(DType dtype) { return kInfos[static_cast<std::size_t>(dtype)]; }

// Aliases beyond the canonical names.
constexpr std::array<std::pair<std::string_view, DType>, 25> kAliases = {{
    {"half", DType::kFloat16},          {"fp16", DType::kFloat16},
    {"float", DType::kFloat32},         {"fp32", DType::kFloat32},
    {"double", DType::kFloat64},        {"fp64", DType::kFloat64},
    {"bf16", DType::kBFloat16},         {"float8_e4m3", DType::kFloat8E4M3FN},
    {"e4m3", DType::kFloat8E4M3FN},     {"fp8_e4m3", DType::kFloat8E4M3FN},
    {"float8_e5m2fn", DType::kFloat8E5M2}, {"e5m2", DType::kFloat8E5M2},
    {"fp8_e5m2", DType::kFloat8E5M2},   {"cfloat", DType::kComplex64},
    {"cdouble", DType::kComplex128},    {"long", DType::kInt64},
    {"int", DType::kInt32},             {"short", DType::kInt16},
    {"char", DType::kInt8},             {"byte", DType::kUInt8},
    {"bool_", DType::kBool},            {"boolean", DType::kBool},
    {"complex", DType::kComplex128},    {"uint", DType::kUInt32},
    {"chalf", DType::kComplex32},
}};

}  // namespace

std::string_view DTypeName(DType dtype) { return Info(dtype).name; }

std::size_t DTypeSize(DType dtype) { return Info(dtype).size; }

std::optional<DType> ParseDType(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string_view key = lower;
  for (std::string_view prefix : {"torch.", "numpy.", "np."}) {
    if (key.substr(0, prefix.size()) == prefix) key.remove_prefix(prefix.size());
  }
  for (const auto& info : kInfos) {
    if (info.name == key) return info.dtype;
  }
  for (const auto& [alias, dtype] : kAliases) {
    if (alias == key) return dtype;
  }
  return std::nullopt;
}

bool IsFloat(DType dtype) {
  switch (dtype) {
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2:
    case DType::kBFloat16:
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      return true;
    default:
      return false;
  }
}

bool IsComplex(DType dtype) {
  return dtype == DType::kComplex32 || dtype == DType::kComplex64 || dtype == DType::kComplex128;
}

bool IsInteger(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
      return true;
    default:
      return false;
  }
}

bool IsSigned(DType dtype) {
  return dtype == DType::kInt8 || dtype == DType::kInt16 || dtype == DType::kInt32 ||
         dtype == DType::kInt64;
}

DType ComplexPart(DType dtype) {
  if (dtype == DType::kComplex32) return DType::kFloat16;
  return dtype == DType::kComplex64 ? DType::kFloat32 : DType::kFloat64;
}

int PrecisionRank(DType dtype) {
  switch (dtype) {
    case DType::kComplex128:
    case DType::kFloat64:
      return 10;
    case DType::kComplex64:
    case DType::kFloat32:
      return 9;
    case DType::kComplex32:
    case DType::kFloat16:
      return 8;
    case DType::kBFloat16:
      return 7;
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2:
      return 6;
    case DType::kInt64:
    case DType::kUInt64:
      return 5;
    case DType::kInt32:
    case DType::kUInt32:
      return 4;
    case DType::kInt16:
    case DType::kUInt16:
      return 3;
    case DType::kInt8:
    case DType::kUInt8:
      return 2;
    case DType::kBool:
      return 1;
  }
  return 0;
}

}  // namespace opverify
