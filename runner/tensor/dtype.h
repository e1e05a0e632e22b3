// Element types the judge understands, and their names.
//
// Names follow torch's spelling without the "torch." prefix ("float16",
// "bfloat16", "float8_e4m3fn"). ParseDType also accepts the common aliases
// people type ("fp16", "half", "bf16", "torch.float32", numpy's "<f4").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace opverify {

enum class DType {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat8E4M3FN,
  kFloat8E5M2,
  kBFloat16,
  kFloat16,
  kFloat32,
  kFloat64,
  kComplex64,
  kComplex128,
  kComplex32,  // torch.complex32 (chalf): two float16 parts
};

std::string_view DTypeName(DType dtype);
std::optional<DType> ParseDType(std::string_view name);

// Bytes per element.
std::size_t DTypeSize(DType dtype);

bool IsFloat(DType dtype);    // real floating point, float8 included
bool IsComplex(DType dtype);
bool IsInteger(DType dtype);  // signed or unsigned, bool excluded
bool IsSigned(DType dtype);   // signed integers (floats are not asked)

// The real dtype of one part of a complex dtype (complex64 -> float32, complex32 -> float16).
DType ComplexPart(DType dtype);

// Rank used to infer an operator's input type (PRECISION.md "Input type"):
// higher is more precise. float64 > float32 > float16 > bfloat16 > float8 >
// int64 > int32 > int16 > int8/uint8 > bool; complex ranks with its part.
int PrecisionRank(DType dtype);

}  // namespace opverify
