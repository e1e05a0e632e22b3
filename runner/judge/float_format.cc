#include "runner/judge/float_format.h"

#include <cmath>
#include <limits>
#include <vector>

namespace opverify {
namespace {

constexpr FloatFormat kFloat8E4M3FN{3, 4, 7, false, 8};
constexpr FloatFormat kFloat8E5M2{2, 5, 15, true, 8};
constexpr FloatFormat kBFloat16{7, 8, 127, true, 16};
constexpr FloatFormat kFloat16{10, 5, 15, true, 16};
constexpr FloatFormat kFloat32{23, 8, 127, true, 32};
constexpr FloatFormat kFloat64{52, 11, 1023, true, 64};

int MaxExponentField(const FloatFormat& f) { return (1 << f.exponent_bits) - 1; }

// Largest finite value of a format.
double MaxFinite(const FloatFormat& f) {
  if (f.has_infinity) {
    // exponent field max-1, all mantissa bits set
    int e = MaxExponentField(f) - 1 - f.bias;
    return std::ldexp(2.0 - std::ldexp(1.0, -f.mantissa_bits), e);
  }
  // e4m3fn: exponent field all ones, mantissa all ones but the last is NaN
  int e = MaxExponentField(f) - f.bias;
  return std::ldexp(2.0 - std::ldexp(1.0, -(f.mantissa_bits - 1)), e);
}

std::uint64_t NaNBits(const FloatFormat& f) {
  std::uint64_t exp_all = static_cast<std::uint64_t>(MaxExponentField(f)) << f.mantissa_bits;
  std::uint64_t mant_all = (std::uint64_t{1} << f.mantissa_bits) - 1;
  // quiet NaN: top mantissa bit (e4m3fn: every mantissa bit)
  return f.has_infinity ? exp_all | (std::uint64_t{1} << (f.mantissa_bits - 1))
                        : exp_all | mant_all;
}

std::vector<float> BuildTable(const FloatFormat& f) {
  std::vector<float> table(std::size_t{1} << f.total_bits);
  for (std::size_t bits = 0; bits < table.size(); ++bits) {
    table[bits] = static_cast<float>(DecodeFloat(bits, f));
  }
  return table;
}

}  // namespace

const FloatFormat& FormatOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat8E4M3FN:
      return kFloat8E4M3FN;
    case DType::kFloat8E5M2:
      return kFloat8E5M2;
    case DType::kBFloat16:
      return kBFloat16;
    case DType::kFloat16:
      return kFloat16;
    case DType::kFloat32:
      return kFloat32;
    default:
      return kFloat64;
  }
}

double DecodeFloat(std::uint64_t bits, const FloatFormat& f) {
  const int p = f.mantissa_bits;
  const bool negative = (bits >> (f.total_bits - 1)) & 1;
  const int exp_field = static_cast<int>((bits >> p) & static_cast<std::uint64_t>(MaxExponentField(f)));
  const std::uint64_t mant = bits & ((std::uint64_t{1} << p) - 1);
  double magnitude;
  if (f.total_bits == 64) {
    std::uint64_t b = bits;
    double d;
    std::memcpy(&d, &b, sizeof d);
    return d;
  }
  if (exp_field == MaxExponentField(f)) {
    if (f.has_infinity) {
      magnitude = mant == 0 ? std::numeric_limits<double>::infinity()
                            : std::numeric_limits<double>::quiet_NaN();
      if (mant != 0) return magnitude;
    } else if (mant == (std::uint64_t{1} << p) - 1) {
      return std::numeric_limits<double>::quiet_NaN();
    } else {
      magnitude = std::ldexp(1.0 + std::ldexp(static_cast<double>(mant), -p), exp_field - f.bias);
    }
  } else if (exp_field == 0) {
    magnitude = std::ldexp(static_cast<double>(mant), 1 - f.bias - p);
  } else {
    magnitude = std::ldexp(1.0 + std::ldexp(static_cast<double>(mant), -p), exp_field - f.bias);
  }
  return negative ? -magnitude : magnitude;
}

std::uint64_t EncodeFloat(double value, const FloatFormat& f) {
  if (f.total_bits == 64) {
    std::uint64_t b;
    std::memcpy(&b, &value, sizeof b);
    return b;
  }
  const int p = f.mantissa_bits;
  const std::uint64_t sign = std::signbit(value) ? std::uint64_t{1} << (f.total_bits - 1) : 0;
  if (std::isnan(value)) return sign | NaNBits(f);
  const double magnitude = std::fabs(value);
  const std::uint64_t exp_max = static_cast<std::uint64_t>(MaxExponentField(f));
  auto overflow = [&] {
    return f.has_infinity ? sign | (exp_max << p) : sign | NaNBits(f);
  };
  if (std::isinf(magnitude)) return overflow();
  if (magnitude == 0) return sign;

  // Scale so that the quantum of the target at this magnitude is 1, then
  // round to an integer with ties to even (nearbyint in the default mode).
  const int min_exp = 1 - f.bias;  // exponent of the smallest normal
  int exp = std::ilogb(magnitude);
  if (exp < min_exp) exp = min_exp;  // subnormal range shares the smallest quantum
  double scaled = std::ldexp(magnitude, p - exp);
  double rounded = std::nearbyint(scaled);  // exact: scaled < 2^(p+1)
  if (std::ldexp(rounded, exp - p) > MaxFinite(f)) return overflow();
  std::uint64_t q = static_cast<std::uint64_t>(rounded);
  if (q >= (std::uint64_t{2} << p)) {  // rounding carried into the next binade
    q >>= 1;
    ++exp;
  }
  if (q < (std::uint64_t{1} << p)) {  // subnormal (only when exp == min_exp)
    return sign | q;
  }
  const std::uint64_t exp_field = static_cast<std::uint64_t>(exp + f.bias);
  return sign | (exp_field << p) | (q - (std::uint64_t{1} << p));
}

double RoundToDType(double value, DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return value;
    case DType::kFloat32:
      return static_cast<double>(static_cast<float>(value));
    default: {
      const FloatFormat& f = FormatOf(dtype);
      return DecodeFloat(EncodeFloat(value, f), f);
    }
  }
}

double Ulp(double x, DType dtype) {
  const FloatFormat& f = FormatOf(dtype);
  const double magnitude = std::fabs(x);
  const int min_exp = 1 - f.bias;
  const double smallest_subnormal = std::ldexp(1.0, min_exp - f.mantissa_bits);
  if (magnitude < std::ldexp(1.0, min_exp)) return smallest_subnormal;
  return std::ldexp(1.0, std::ilogb(magnitude) - f.mantissa_bits);
}

const float* Float16Table() {
  static const std::vector<float> table = BuildTable(kFloat16);
  return table.data();
}

const float* Float8E4M3FNTable() {
  static const std::vector<float> table = BuildTable(kFloat8E4M3FN);
  return table.data();
}

const float* Float8E5M2Table() {
  static const std::vector<float> table = BuildTable(kFloat8E5M2);
  return table.data();
}

}  // namespace opverify
