// Bit-exact decoding and round-to-nearest-even encoding of the narrow formats.
#include "runner/judge/float_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace opverify {
namespace {

TEST(FloatFormat, DecodesKnownPatterns) {
  const auto& f16 = FormatOf(DType::kFloat16);
  EXPECT_EQ(DecodeFloat(0x3C00, f16), 1.0);
  EXPECT_EQ(DecodeFloat(0x7BFF, f16), 65504.0);
  EXPECT_EQ(DecodeFloat(0x0001, f16), std::ldexp(1.0, -24));
  EXPECT_EQ(DecodeFloat(0x0400, f16), std::ldexp(1.0, -14));
  EXPECT_EQ(DecodeFloat(0x7C00, f16), std::numeric_limits<double>::infinity());
  EXPECT_EQ(DecodeFloat(0xFC00, f16), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(DecodeFloat(0x7E00, f16)));
  EXPECT_EQ(DecodeFloat(0xC000, f16), -2.0);
  const auto& bf16 = FormatOf(DType::kBFloat16);
  EXPECT_EQ(DecodeFloat(0x3F80, bf16), 1.0);
  EXPECT_EQ(DecodeBFloat16(0x3F80), 1.0);
  EXPECT_EQ(DecodeFloat(0x0001, bf16), std::ldexp(1.0, -133));
  const auto& e4m3 = FormatOf(DType::kFloat8E4M3FN);
  EXPECT_EQ(DecodeFloat(0x7E, e4m3), 448.0);
  EXPECT_TRUE(std::isnan(DecodeFloat(0x7F, e4m3)));
  EXPECT_TRUE(std::isnan(DecodeFloat(0xFF, e4m3)));
  EXPECT_EQ(DecodeFloat(0x78, e4m3), 256.0);  // all-ones exponent is a normal binade
  EXPECT_EQ(DecodeFloat(0x01, e4m3), std::ldexp(1.0, -9));
  EXPECT_EQ(DecodeFloat(0x08, e4m3), std::ldexp(1.0, -6));
  const auto& e5m2 = FormatOf(DType::kFloat8E5M2);
  EXPECT_EQ(DecodeFloat(0x7B, e5m2), 57344.0);
  EXPECT_EQ(DecodeFloat(0x7C, e5m2), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(DecodeFloat(0x7D, e5m2)));
  EXPECT_EQ(DecodeFloat(0x01, e5m2), std::ldexp(1.0, -16));
}

TEST(FloatFormat, EveryPatternRoundTrips) {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat8E4M3FN, DType::kFloat8E5M2}) {
    const auto& f = FormatOf(dtype);
    for (std::uint64_t bits = 0; bits < (std::uint64_t{1} << f.total_bits); ++bits) {
      const double v = DecodeFloat(bits, f);
      if (std::isnan(v)) continue;
      ASSERT_EQ(EncodeFloat(v, f), bits) << DTypeName(dtype) << " " << bits;
    }
  }
}

TEST(FloatFormat, TablesMatchTheDecoder) {
  for (std::uint64_t bits = 0; bits < 65536; ++bits) {
    const double v = DecodeFloat(bits, FormatOf(DType::kFloat16));
    if (std::isnan(v)) {
      ASSERT_TRUE(std::isnan(Float16Table()[bits]));
    } else {
      ASSERT_EQ(Float16Table()[bits], v);
    }
  }
  for (std::uint64_t bits = 0; bits < 256; ++bits) {
    const double v = DecodeFloat(bits, FormatOf(DType::kFloat8E4M3FN));
    if (!std::isnan(v)) {
      ASSERT_EQ(Float8E4M3FNTable()[bits], v);
    }
  }
}

TEST(FloatFormat, RoundsToNearestEven) {
  const double half = std::ldexp(1.0, -11);  // half a float16 ULP at 1
  EXPECT_EQ(RoundToDType(1.0 + half, DType::kFloat16), 1.0);                           // tie -> even
  EXPECT_EQ(RoundToDType(1.0 + 3 * half, DType::kFloat16), 1.0 + 4 * half);            // tie -> even
  EXPECT_EQ(RoundToDType(1.0 + half * 1.0001, DType::kFloat16), 1.0 + 2 * half);       // above the tie
  EXPECT_EQ(RoundToDType(65519.0, DType::kFloat16), 65504.0);
  EXPECT_TRUE(std::isinf(RoundToDType(65520.0, DType::kFloat16)));
  EXPECT_EQ(RoundToDType(464.0, DType::kFloat8E4M3FN), 448.0);
  EXPECT_TRUE(std::isnan(RoundToDType(500.0, DType::kFloat8E4M3FN)));  // no infinity: NaN
  EXPECT_TRUE(std::isinf(RoundToDType(1e6, DType::kFloat8E5M2)));
  EXPECT_EQ(RoundToDType(std::ldexp(1.0, -25), DType::kFloat16), 0.0);                   // tie to 0
  EXPECT_EQ(RoundToDType(std::ldexp(1.5, -25), DType::kFloat16), std::ldexp(1.0, -24));  // to subnormal
  EXPECT_EQ(RoundToDType(-0.0, DType::kBFloat16), 0.0);
  EXPECT_TRUE(std::signbit(RoundToDType(-0.0, DType::kBFloat16)));
  // Directly from double, not through float: 1 + 2^-8 + 2^-30 rounds up in
  // bfloat16 (a float would first drop the 2^-30 and tie to even: down).
  EXPECT_EQ(RoundToDType(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30), DType::kBFloat16), 1.0 + std::ldexp(1.0, -7));
}

}  // namespace
}  // namespace opverify
