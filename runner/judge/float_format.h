// Bit-exact conversions between double and the narrow float formats, and the
// unit in the last place (ULP) of each format.
//
// Decoding is exact (every value of these formats is a double). Encoding
// rounds to nearest, ties to even, directly from double (no double rounding
// through float). Overflow gives infinity, except for float8_e4m3fn, which
// has no infinity and gives NaN (as torch's non-saturating cast does).
#pragma once

#include <cstdint>
#include <cstring>

#include "runner/tensor/dtype.h"

namespace opverify {

struct FloatFormat {
  int mantissa_bits;  // p: stored fraction bits
  int exponent_bits;
  int bias;
  bool has_infinity;  // false for float8_e4m3fn (all-ones exponent is a normal binade)
  int total_bits;
};

// The format of a real floating dtype (float8, bfloat16, float16, float32, float64).
const FloatFormat& FormatOf(DType dtype);

double DecodeFloat(std::uint64_t bits, const FloatFormat& format);
std::uint64_t EncodeFloat(double value, const FloatFormat& format);

// The value `value` takes once cast to `dtype` (a real float dtype).
double RoundToDType(double value, DType dtype);

// ULP(x) of PRECISION.md: 2^(floor(log2 |x|) - p) for normal |x|, and the
// smallest subnormal for zero and subnormal |x|. `x` must be finite.
double Ulp(double x, DType dtype);

// Fast decoders used on the judge's hot path.
inline double DecodeBFloat16(std::uint16_t bits) {
  std::uint32_t widened = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &widened, sizeof f);
  return f;
}

// Tables of every value of the 16- and 8-bit formats, as float (exact).
const float* Float16Table();        // 65536 entries
const float* Float8E4M3FNTable();   // 256 entries
const float* Float8E5M2Table();     // 256 entries

}  // namespace opverify
