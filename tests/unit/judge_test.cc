// The judge against PRECISION.md: its worked vectors, every route and
// standard, values exactly at each bound, and the awkward tensors.
#include "runner/judge/judge.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runner/judge/float_format.h"
#include "runner/judge/verdict_json.h"
#include "tests/support/tensor_builder.h"

namespace opverify {
namespace {

using testing::OwnedTensor;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

JudgeOptions Opts(Standard standard = Standard::kEco) {
  JudgeOptions o;
  o.standard = standard;
  return o;
}

std::vector<double> Filled(std::size_t n, double v) { return std::vector<double>(n, v); }

// ---- PRECISION.md's worked vectors -------------------------------------

TEST(JudgeWorkedVectors, Float16IdenticalPassesWithZeroMere) {
  OwnedTensor g(DType::kFloat16, {1, 2, 4, 8});
  Verdict v = Judge(g, g, Opts());
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.route, Route::kEco);
  EXPECT_EQ(v.error_type, ErrorType::kNone);
  EXPECT_EQ(v.metrics.npu_benchmark.mere, 0.0);
  EXPECT_EQ(v.metrics.mere_mare.mere, 0.0);
  EXPECT_EQ(v.metrics.eco->matched_ratio, 1.0);
  EXPECT_TRUE(v.worst.empty());
}

TEST(JudgeWorkedVectors, Float32ElevenOffFailsMatchedRatioOnly) {
  std::vector<double> a = Filled(1000, 1.0);
  for (int i = 0; i < 11; ++i) a[i * 90] = 1.0 + 2e-3;
  Verdict v = Judge(OwnedTensor(DType::kFloat32, Filled(1000, 1.0)), OwnedTensor(DType::kFloat32, a), Opts());
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.error_type, ErrorType::kAccuracyError);
  EXPECT_EQ(v.metrics.eco->over_count, 0);
  EXPECT_DOUBLE_EQ(v.metrics.eco->matched_ratio, 989.0 / 1000.0);
  EXPECT_NE(v.error_msg.find("matched_ratio"), std::string::npos);
  EXPECT_EQ(v.error_msg.find("over_count"), std::string::npos);
  ASSERT_EQ(v.worst.size(), 8u);
  EXPECT_EQ(v.worst[0].index, 0);  // equal errors: lowest index first
  EXPECT_EQ(v.worst[1].index, 90);
}

TEST(JudgeWorkedVectors, Float32NineOffPasses) {
  std::vector<double> a = Filled(1000, 1.0);
  for (int i = 0; i < 9; ++i) a[i * 100 + 3] = 1.0 + 2e-3;
  Verdict v = Judge(OwnedTensor(DType::kFloat32, Filled(1000, 1.0)), OwnedTensor(DType::kFloat32, a), Opts());
  EXPECT_TRUE(v.passed);
  EXPECT_DOUBLE_EQ(v.metrics.eco->matched_ratio, 0.991);
  EXPECT_EQ(v.metrics.eco->over_count, 0);
}

TEST(JudgeWorkedVectors, Float32OneLargeErrorFailsOverCountAlone) {
  std::vector<double> a = Filled(1000, 1.0);
  a[500] = 1.02;
  Verdict v = Judge(OwnedTensor(DType::kFloat32, Filled(1000, 1.0)), OwnedTensor(DType::kFloat32, a), Opts());
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.metrics.eco->over_count, 1);
  EXPECT_DOUBLE_EQ(v.metrics.eco->matched_ratio, 0.999);
  EXPECT_EQ(v.error_msg.find("matched_ratio"), std::string::npos);
  EXPECT_NE(v.error_msg.find("over_count"), std::string::npos);
  ASSERT_FALSE(v.worst.empty());
  EXPECT_EQ(v.worst[0].index, 500);
}

TEST(JudgeWorkedVectors, Float16NaNAgainstNumberIsNaNMismatch) {
  Verdict v = Judge(OwnedTensor(DType::kFloat16, {kNaN, 1}), OwnedTensor(DType::kFloat16, {1, 1}), Opts());
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.error_type, ErrorType::kNaNMismatch);
  EXPECT_EQ(v.metrics.nan_mismatch_count, 1);
  ASSERT_EQ(v.worst.size(), 1u);
  EXPECT_EQ(v.worst[0].index, 0);
}

TEST(JudgeWorkedVectors, OppositeInfinitiesAreInfMismatch) {
  Verdict v = Judge(OwnedTensor(DType::kFloat32, {kInf}), OwnedTensor(DType::kFloat32, {-kInf}), Opts());
  EXPECT_EQ(v.error_type, ErrorType::kInfMismatch);
}

TEST(JudgeWorkedVectors, QuantAllowsOneNotTwo) {
  JudgeOptions o = Opts();
  o.input_type = InputType::kFloat;
  Verdict one = Judge(OwnedTensor(DType::kInt32, {5, 7}), OwnedTensor(DType::kInt32, {6, 7}), o);
  EXPECT_EQ(one.route, Route::kQuant);
  EXPECT_TRUE(one.passed);
  Verdict two = Judge(OwnedTensor(DType::kInt32, {5, 7}), OwnedTensor(DType::kInt32, {7, 7}), o);
  EXPECT_FALSE(two.passed);
  EXPECT_EQ(two.error_type, ErrorType::kAccuracyError);
  EXPECT_EQ(two.metrics.discrete->violation_count, 1);
}

TEST(JudgeWorkedVectors, BoolOneDifferenceFails) {
  Verdict v = Judge(OwnedTensor(DType::kBool, {1, 0, 1}), OwnedTensor(DType::kBool, {1, 1, 1}), Opts());
  EXPECT_EQ(v.route, Route::kExact);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.metrics.discrete->category, "bool_output");
}

TEST(JudgeWorkedVectors, NonComputeNaNPayloadsDiffer) {
  JudgeOptions o = Opts();
  o.non_compute = true;
  Verdict v = Judge(OwnedTensor::FromBits(DType::kFloat32, {0x7fc00001}),
                    OwnedTensor::FromBits(DType::kFloat32, {0x7fc00002}), o);
  EXPECT_EQ(v.route, Route::kBitwise);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.error_type, ErrorType::kAccuracyError);  // NaN masks agree; bits do not
  EXPECT_EQ(v.metrics.discrete->violation_count, 1);
  ASSERT_EQ(v.worst.size(), 1u);
}

// ---- routing -------------------------------------------------------------

TEST(JudgeRouting, RoutesFollowThePrecisionTable) {
  EXPECT_EQ(SelectRoute(DType::kFloat16, Standard::kEco, InputType::kFloat, true), Route::kBitwise);
  EXPECT_EQ(SelectRoute(DType::kBool, Standard::kEco, InputType::kFloat, false), Route::kExact);
  EXPECT_EQ(SelectRoute(DType::kInt8, Standard::kEco, InputType::kFloat, false), Route::kQuant);
  EXPECT_EQ(SelectRoute(DType::kInt8, Standard::kEco, InputType::kInt, false), Route::kExact);
  EXPECT_EQ(SelectRoute(DType::kInt8, Standard::kEco, InputType::kNoTensor, false), Route::kExact);
  EXPECT_EQ(SelectRoute(DType::kInt8, Standard::kEco, InputType::kUnknown, false), Route::kExact);
  EXPECT_EQ(SelectRoute(DType::kInt8, Standard::kMereMare, InputType::kFloat, false), Route::kExact);
  EXPECT_EQ(SelectRoute(DType::kInt8, Standard::kStrict, InputType::kFloat, false), Route::kExact);
  EXPECT_EQ(SelectRoute(DType::kInt8, Standard::kNpuBenchmark, InputType::kFloat, false), Route::kQuant);
  for (DType d : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat8E4M3FN,
                  DType::kFloat8E5M2}) {
    EXPECT_EQ(SelectRoute(d, Standard::kEco, InputType::kFloat, false), Route::kEco) << DTypeName(d);
  }
  for (DType d : {DType::kFloat64, DType::kComplex64, DType::kComplex128}) {
    EXPECT_EQ(SelectRoute(d, Standard::kEco, InputType::kFloat, false), Route::kNpuBenchmark) << DTypeName(d);
  }
  EXPECT_EQ(SelectRoute(DType::kFloat16, Standard::kNpuBenchmark, InputType::kFloat, false), Route::kNpuBenchmark);
  EXPECT_EQ(SelectRoute(DType::kFloat16, Standard::kMereMare, InputType::kFloat, false), Route::kMereMare);
  EXPECT_EQ(SelectRoute(DType::kFloat16, Standard::kStrict, InputType::kFloat, false), Route::kStrict);
}

TEST(JudgeRouting, InputTypeTakesTheMostPreciseInput) {
  EXPECT_EQ(InferInputType({DType::kFloat16, DType::kFloat32, DType::kInt64}), InputType::kFloat);
  EXPECT_EQ(InferInputType({DType::kInt64, DType::kBool}), InputType::kInt);
  EXPECT_EQ(InferInputType({DType::kBool}), InputType::kInt);
  EXPECT_EQ(InferInputType({DType::kFloat8E5M2, DType::kInt64}), InputType::kFloat);
  EXPECT_EQ(InferInputType({DType::kComplex64}), InputType::kFloat);
  EXPECT_EQ(InferInputType({}), InputType::kNoTensor);
}

TEST(JudgeRouting, Float64FallsBackToNpuBenchmarkWithoutEcoMetrics) {
  OwnedTensor g(DType::kFloat64, {1, 2, 3});
  Verdict v = Judge(g, g, Opts());
  EXPECT_EQ(v.route, Route::kNpuBenchmark);
  EXPECT_FALSE(v.metrics.eco.has_value());
  EXPECT_TRUE(v.passed);
  auto json = VerdictToJson(v);
  EXPECT_FALSE(json["metrics"].contains("eco"));
  EXPECT_TRUE(json["metrics"].contains("npu_benchmark"));
  EXPECT_TRUE(json["metrics"].contains("mere_mare"));
}

TEST(JudgeRouting, EveryFloatOutputCarriesEveryStandardsMetrics) {
  OwnedTensor g(DType::kBFloat16, {1, 2, 3});
  for (Standard s : {Standard::kEco, Standard::kNpuBenchmark, Standard::kMereMare, Standard::kStrict}) {
    auto json = VerdictToJson(Judge(g, g, Opts(s)));
    const auto& m = json["metrics"];
    for (const char* key : {"total", "total_finite", "nan_count", "inf_count", "max_abs_diff", "max_rel_diff"}) {
      EXPECT_TRUE(m.contains(key)) << key;
    }
    for (const char* key : {"matched_ratio", "over_count", "rtol", "atol", "max_abs_error_limit", "passed"}) {
      EXPECT_TRUE(m["eco"].contains(key)) << key;
    }
    for (const char* key : {"matched_ratio", "MERE", "max_error_cap_violation_count", "small_count",
                            "normal_count", "small_value_threshold", "small_value_error",
                            "rel_threshold", "atol", "rtol", "checks", "passed"}) {
      EXPECT_TRUE(m["npu_benchmark"].contains(key)) << key;
    }
    for (const char* key : {"max_error_cap", "required_matched_ratio", "MERE"}) {
      EXPECT_TRUE(m["npu_benchmark"]["checks"].contains(key)) << key;
    }
    for (const char* key : {"MERE", "MARE", "threshold", "passed"}) {
      EXPECT_TRUE(m["mere_mare"].contains(key)) << key;
    }
  }
}

// ---- the standards a job can choose ------------------------------------

// 1000 float16 elements of 1.0; `off` of them carry an error of `d`.
Verdict Float16WithErrors(int off, double d, Standard standard) {
  std::vector<double> a = Filled(1000, 1.0);
  for (int i = 0; i < off; ++i) a[i] = 1.0 + d;
  return Judge(OwnedTensor(DType::kFloat16, Filled(1000, 1.0)), OwnedTensor(DType::kFloat16, a), Opts(standard));
}

TEST(JudgeStandards, MereMareFailsWhereEcoPasses) {
  // 9 elements off by 2^-6: eco passes (99.1% matched, all under the 0.1
  // limit); MARE = 2^-6 >= 10 * 2^-10 fails mere_mare, and so strict.
  const double d = std::ldexp(1.0, -6);
  EXPECT_TRUE(Float16WithErrors(9, d, Standard::kEco).passed);
  Verdict mm = Float16WithErrors(9, d, Standard::kMereMare);
  EXPECT_EQ(mm.route, Route::kMereMare);
  EXPECT_FALSE(mm.passed);
  EXPECT_DOUBLE_EQ(mm.metrics.mere_mare.mare, d);
  EXPECT_NE(mm.error_msg.find("MARE"), std::string::npos);
  Verdict strict = Float16WithErrors(9, d, Standard::kStrict);
  EXPECT_FALSE(strict.passed);
  EXPECT_EQ(strict.route, Route::kStrict);
}

TEST(JudgeStandards, NpuBenchmarkCapAndMere) {
  // fp16 cap: 9e-2 + 2^-10 * |G|. One element off by 0.125 violates it.
  Verdict v = Float16WithErrors(1, 0.125, Standard::kNpuBenchmark);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.metrics.npu_benchmark.max_error_cap_violation_count, 1);
  EXPECT_FALSE(v.metrics.npu_benchmark.max_error_cap_passed);
  // 100 elements off by 2^-8: each relative error ~2^-8 > 2^-10: matched 90%
  // exactly (passes), MERE = 100 * 2^-8/(1+1e-7) / 1000 ~ 3.9e-4 < 2^-10 passes.
  Verdict w = Float16WithErrors(100, std::ldexp(1.0, -8), Standard::kNpuBenchmark);
  EXPECT_TRUE(w.metrics.npu_benchmark.matched_ratio_passed);
  EXPECT_DOUBLE_EQ(w.metrics.npu_benchmark.matched_ratio, 0.9);
  EXPECT_TRUE(w.passed) << w.error_msg;
  Verdict x = Float16WithErrors(101, std::ldexp(1.0, -8), Standard::kNpuBenchmark);
  EXPECT_FALSE(x.metrics.npu_benchmark.matched_ratio_passed);
  EXPECT_FALSE(x.passed);
}

TEST(JudgeStandards, StrictNeedsBoth) {
  EXPECT_TRUE(Float16WithErrors(0, 0, Standard::kStrict).passed);
  // 11 elements off by 2^-7 > eco tol (2^-9 + 2^-9): eco fails (11 > 1%);
  // mere_mare alone passes (MARE 2^-7 < 10 * 2^-10, MERE tiny).
  const double d = std::ldexp(1.0, -7);
  Verdict mm = Float16WithErrors(11, d, Standard::kMereMare);
  EXPECT_TRUE(mm.passed) << mm.error_msg;
  Verdict strict = Float16WithErrors(11, d, Standard::kStrict);
  EXPECT_FALSE(strict.passed);
  EXPECT_NE(strict.error_msg.find("eco matched_ratio"), std::string::npos);
}

TEST(JudgeStandards, PrecisionModeSelectsHifloat32Rows) {
  // float32, d = 2^-10 relative: beyond float32 eco (rtol 2^-10 + atol) on all
  // elements, but within hifloat32 (rtol 2^-9).
  std::vector<double> a = Filled(100, 1.0 + std::ldexp(1.0, -10) + std::ldexp(1.0, -16) * 2);
  OwnedTensor g(DType::kFloat32, Filled(100, 1.0)), act(DType::kFloat32, a);
  EXPECT_FALSE(Judge(g, act, Opts()).passed);
  JudgeOptions o = Opts();
  o.precision_mode = PrecisionMode::kTF32;
  Verdict v = Judge(g, act, o);
  EXPECT_TRUE(v.passed) << v.error_msg;
  EXPECT_EQ(v.metrics.eco->thresholds.rtol, std::ldexp(1.0, -9));
  EXPECT_EQ(v.metrics.mere_mare.threshold, std::ldexp(1.0, -11));
  EXPECT_EQ(v.metrics.npu_benchmark.thresholds.small_value_threshold, std::ldexp(1.0, -12));
  o.precision_mode = PrecisionMode::kHF32;
  EXPECT_TRUE(Judge(g, act, o).passed);
}

// ---- values exactly at each bound --------------------------------------

TEST(JudgeBounds, EcoMixedToleranceIsInclusive) {
  const double tol = std::ldexp(1.0, -16) + std::ldexp(1.0, -10);  // float32, |G| = 1
  std::vector<double> at = Filled(100, 1.0), above = Filled(100, 1.0);
  at[0] = at[1] = 1.0 + tol;
  above[0] = above[1] = std::nextafter(static_cast<float>(1.0 + tol), 2.0f);
  OwnedTensor g(DType::kFloat32, Filled(100, 1.0));
  EXPECT_EQ(Judge(g, OwnedTensor(DType::kFloat32, at), Opts()).metrics.eco->matched_count, 100);
  EXPECT_EQ(Judge(g, OwnedTensor(DType::kFloat32, above), Opts()).metrics.eco->matched_count, 98);
}

TEST(JudgeBounds, EcoMatchedRatioExactlyNinetyNinePercentPasses) {
  std::vector<double> a = Filled(1000, 1.0);
  for (int i = 0; i < 10; ++i) a[i] = 1.0 + 2e-3;
  Verdict v = Judge(OwnedTensor(DType::kFloat32, Filled(1000, 1.0)), OwnedTensor(DType::kFloat32, a), Opts());
  EXPECT_DOUBLE_EQ(v.metrics.eco->matched_ratio, 0.99);
  EXPECT_TRUE(v.passed);
}

TEST(JudgeBounds, EcoOverBoundIsInclusiveAtMaxAbsErrorLimit) {
  // bfloat16 G = 0: bound = max(1.0, 32 ULP(0), 2^-6) = 1.0 exactly.
  std::vector<double> g = Filled(200, 0.0), at = g, over = g;
  at[0] = 1.0;
  over[0] = 1.0078125;  // the next bfloat16
  OwnedTensor gt(DType::kBFloat16, g);
  EXPECT_EQ(Judge(gt, OwnedTensor(DType::kBFloat16, at), Opts()).metrics.eco->over_count, 0);
  EXPECT_EQ(Judge(gt, OwnedTensor(DType::kBFloat16, over), Opts()).metrics.eco->over_count, 1);
  // float32 G = 0: limit 1e-2 is no float32; the nearest ones fall either side.
  std::vector<double> g32 = Filled(200, 0.0), below = g32, above = g32;
  below[0] = static_cast<float>(1e-2);  // 0.00999999977...
  above[0] = std::nextafter(static_cast<float>(1e-2), 1.0f);
  OwnedTensor gt32(DType::kFloat32, g32);
  EXPECT_EQ(Judge(gt32, OwnedTensor(DType::kFloat32, below), Opts()).metrics.eco->over_count, 0);
  EXPECT_EQ(Judge(gt32, OwnedTensor(DType::kFloat32, above), Opts()).metrics.eco->over_count, 1);
}

TEST(JudgeBounds, NpuSmallValueThresholdBelongsToTheNormalSide) {
  // float64 (npu route, float32 row): svt = 2^-14. |G| = svt is normal:
  // matched by the relative rule (2^-13), not the small absolute 2^-30.
  const double svt = std::ldexp(1.0, -14);
  std::vector<double> g = Filled(10, svt), a = Filled(10, svt + svt * std::ldexp(1.0, -14));
  Verdict v = Judge(OwnedTensor(DType::kFloat64, g), OwnedTensor(DType::kFloat64, a), Opts());
  EXPECT_EQ(v.metrics.npu_benchmark.small_count, 0);
  EXPECT_EQ(v.metrics.npu_benchmark.normal_count, 10);
  EXPECT_EQ(v.metrics.npu_benchmark.matched_count, 10);
  std::vector<double> gs = Filled(10, svt - std::ldexp(1.0, -40)), as = gs;  // just below svt
  as[0] += std::ldexp(1.0, -30);  // exactly sve: matched
  as[1] += std::ldexp(1.0, -29);  // above sve: not matched
  Verdict s = Judge(OwnedTensor(DType::kFloat64, gs), OwnedTensor(DType::kFloat64, as), Opts());
  EXPECT_EQ(s.metrics.npu_benchmark.small_count, 10);
  EXPECT_EQ(s.metrics.npu_benchmark.matched_count, 9);
}

TEST(JudgeBounds, NpuCapIsInclusive) {
  // float64 cap: 1e-3 + 2^-13 |G|; G = 0 makes it 1e-3 exactly.
  std::vector<double> g = Filled(4, 0.0), at = g, above = g;
  at[0] = 1e-3;
  above[0] = std::nextafter(1e-3, 1.0);
  EXPECT_EQ(Judge(OwnedTensor(DType::kFloat64, g), OwnedTensor(DType::kFloat64, at), Opts())
                .metrics.npu_benchmark.max_error_cap_violation_count, 0);
  EXPECT_EQ(Judge(OwnedTensor(DType::kFloat64, g), OwnedTensor(DType::kFloat64, above), Opts())
                .metrics.npu_benchmark.max_error_cap_violation_count, 1);
}

TEST(JudgeBounds, MereAndMareBoundsAreExclusive) {
  // mere_mare float32, G = 1, d = T = 2^-13 everywhere: MERE == T fails.
  const double t = std::ldexp(1.0, -13);
  OwnedTensor g(DType::kFloat32, Filled(64, 1.0));
  Verdict at = Judge(g, OwnedTensor(DType::kFloat32, Filled(64, 1.0 + t)), Opts(Standard::kMereMare));
  EXPECT_EQ(at.metrics.mere_mare.mere, t);
  EXPECT_FALSE(at.passed);
  // MARE exactly 10 T on one element (G = 1, d = 10 T), MERE small: fails on MARE.
  std::vector<double> a = Filled(64, 1.0);
  a[0] = 1.0 + 10 * t;
  Verdict mare = Judge(g, OwnedTensor(DType::kFloat32, a), Opts(Standard::kMereMare));
  EXPECT_EQ(mare.metrics.mere_mare.mare, 10 * t);
  EXPECT_LT(mare.metrics.mere_mare.mere, t);
  EXPECT_FALSE(mare.passed);
  a[0] = 1.0 + 9 * t;
  EXPECT_TRUE(Judge(g, OwnedTensor(DType::kFloat32, a), Opts(Standard::kMereMare)).passed);
}

TEST(JudgeBounds, MereMareDenominatorIsClampedAtT) {
  // G = 0, d = T/2: rel = (T/2) / T = 0.5, not infinite.
  const double t = std::ldexp(1.0, -13);
  Verdict v = Judge(OwnedTensor(DType::kFloat32, {0.0, 1.0}), OwnedTensor(DType::kFloat32, {t / 2, 1.0}),
                    Opts(Standard::kMereMare));
  EXPECT_DOUBLE_EQ(v.metrics.mere_mare.mare, 0.5);
  EXPECT_DOUBLE_EQ(v.metrics.mere_mare.mere, 0.25);
}

TEST(JudgeBounds, NpuMereBoundIsExclusive) {
  // float64, G = 1, rel error of every element r with r/(1+1e-7) == 2^-13
  // is not constructible exactly; use G large enough that 1e-7 vanishes.
  const double g = std::ldexp(1.0, 40), rel = std::ldexp(1.0, -13);
  std::vector<double> gs = Filled(16, g), as = Filled(16, g + g * rel);
  Verdict v = Judge(OwnedTensor(DType::kFloat64, gs), OwnedTensor(DType::kFloat64, as), Opts());
  EXPECT_EQ(v.metrics.npu_benchmark.mere, rel);
  EXPECT_FALSE(v.metrics.npu_benchmark.mere_passed);
  EXPECT_EQ(v.metrics.npu_benchmark.matched_count, 16);  // matched: <= rel
}

TEST(JudgeBounds, QuantAndExactAtTheirBounds) {
  JudgeOptions quant = Opts();
  quant.input_type = InputType::kFloat;
  EXPECT_TRUE(Judge(OwnedTensor(DType::kInt8, {-128, 127}), OwnedTensor(DType::kInt8, {-127, 126}), quant).passed);
  JudgeOptions exact = Opts();
  exact.input_type = InputType::kInt;
  EXPECT_FALSE(Judge(OwnedTensor(DType::kInt8, {-128}), OwnedTensor(DType::kInt8, {-127}), exact).passed);
}

TEST(JudgeBounds, LargeIntegersCompareExactlyNotThroughDoubles) {
  // 2^63 and 2^63 + 1 are the same double; they are different uint64s.
  const std::uint64_t big = std::uint64_t{1} << 63;
  Verdict v = Judge(OwnedTensor::FromBits(DType::kUInt64, {big + 1}), OwnedTensor::FromBits(DType::kUInt64, {big}), Opts());
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.metrics.max_abs_diff, 1.0);
}

// ---- ULP at and around powers of two, through the eco over bound --------

struct UlpCase {
  DType dtype;
  int mantissa_bits;
  int min_exponent;
};

class JudgeUlp : public ::testing::TestWithParam<UlpCase> {};

TEST_P(JudgeUlp, UlpAtAroundAndBelowPowersOfTwo) {
  const auto [dtype, p, emin] = GetParam();
  for (int k = emin; k <= emin + 20 && k < 15; ++k) {
    const double x = std::ldexp(1.0, k);
    EXPECT_EQ(Ulp(x, dtype), std::ldexp(1.0, k - p)) << DTypeName(dtype) << " 2^" << k;
    const double below = std::ldexp(2.0 - std::ldexp(1.0, -p), k - 1);  // largest value < 2^k
    if (k > emin) {
      EXPECT_EQ(Ulp(below, dtype), std::ldexp(1.0, k - 1 - p)) << "below 2^" << k;
    }
    EXPECT_EQ(Ulp(-x, dtype), Ulp(x, dtype));
  }
  const double smallest = std::ldexp(1.0, emin - p);
  EXPECT_EQ(Ulp(0.0, dtype), smallest);
  EXPECT_EQ(Ulp(smallest, dtype), smallest);
  EXPECT_EQ(Ulp(std::ldexp(1.0, emin) - smallest, dtype), smallest);  // largest subnormal
  EXPECT_EQ(Ulp(std::ldexp(1.0, emin), dtype), smallest);             // smallest normal
}

TEST_P(JudgeUlp, OverBoundUses32UlpOfTheGolden) {
  const DType dtype = GetParam().dtype;
  const int p = GetParam().mantissa_bits;
  const FloatFormat& format = FormatOf(dtype);
  const EcoThresholds eco = *EcoThresholdsFor(dtype, PrecisionMode::kNone);
  // The first power of two where 32 ULP is the largest term of the bound:
  // the largest value within it is not over, the next one is.
  for (int k = 0; k < 8; ++k) {
    const double g = std::ldexp(1.0, k);
    const double ulp32 = 32 * std::ldexp(1.0, k - p);
    const double other = std::max(eco.atol + eco.rtol * g, eco.max_abs_error_limit);
    if (ulp32 <= other) continue;
    std::uint64_t bits = EncodeFloat(g + ulp32, format);
    if (DecodeFloat(bits, format) > g + ulp32) --bits;
    const double at = DecodeFloat(bits, format), over = DecodeFloat(bits + 1, format);
    if (!(at - g > other) || !std::isfinite(over)) continue;
    std::vector<double> gs = Filled(200, g), at_v = gs, over_v = gs;
    at_v[7] = at;
    over_v[7] = over;
    EXPECT_EQ(Judge(OwnedTensor(dtype, gs), OwnedTensor(dtype, at_v), Opts()).metrics.eco->over_count, 0)
        << DTypeName(dtype) << " G = 2^" << k << ", A = " << at;
    EXPECT_EQ(Judge(OwnedTensor(dtype, gs), OwnedTensor(dtype, over_v), Opts()).metrics.eco->over_count, 1)
        << DTypeName(dtype) << " G = 2^" << k << ", A = " << over;
    return;
  }
  // Only float32's mixed tolerance always exceeds 32 ULP (the seed's note).
  EXPECT_EQ(dtype, DType::kFloat32);
}

INSTANTIATE_TEST_SUITE_P(EachDType, JudgeUlp,
                         ::testing::Values(UlpCase{DType::kFloat16, 10, -14},
                                           UlpCase{DType::kBFloat16, 7, -126},
                                           UlpCase{DType::kFloat32, 23, -126},
                                           UlpCase{DType::kFloat8E4M3FN, 3, -6},
                                           UlpCase{DType::kFloat8E5M2, 2, -14}),
                         [](const auto& param_info) { return std::string(DTypeName(param_info.param.dtype)); });

// ---- awkward tensors ------------------------------------------------------

TEST(JudgeEdges, EmptyTensorsPass) {
  OwnedTensor g(DType::kFloat32, {0, 3}, {});
  Verdict v = Judge(g, g, Opts());
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.metrics.total, 0);
  EXPECT_EQ(v.metrics.eco->matched_ratio, 1.0);
  EXPECT_EQ(v.metrics.npu_benchmark.mere, 0.0);
  EXPECT_EQ(v.metrics.mere_mare.mare, 0.0);
}

TEST(JudgeEdges, ZeroDimensionalTensors) {
  OwnedTensor g(DType::kFloat32, std::vector<std::int64_t>{}, {3.0});
  OwnedTensor a(DType::kFloat32, std::vector<std::int64_t>{}, {3.5});
  Verdict v = Judge(g, a, Opts());
  EXPECT_EQ(v.metrics.total, 1);
  EXPECT_FALSE(v.passed);
  // A 0-d tensor and a one-element 1-d tensor are different shapes.
  Verdict s = Judge(g, OwnedTensor(DType::kFloat32, {1}, {3.0}), Opts());
  EXPECT_EQ(s.error_type, ErrorType::kShapeMismatch);
  EXPECT_NE(s.error_msg.find("[] vs actual [1]"), std::string::npos);
}

TEST(JudgeEdges, AllNaNOnBothSidesPassesWithNoFiniteElements) {
  OwnedTensor g(DType::kBFloat16, Filled(50, kNaN));
  Verdict v = Judge(g, g, Opts(Standard::kStrict));
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.metrics.total_finite, 0);
  EXPECT_EQ(v.metrics.nan_count, 50);
  EXPECT_EQ(v.metrics.eco->matched_ratio, 1.0);
  EXPECT_EQ(v.metrics.npu_benchmark.matched_ratio, 1.0);
}

TEST(JudgeEdges, MatchingInfinitiesAreExcludedFromMetrics) {
  Verdict v = Judge(OwnedTensor(DType::kFloat32, {kInf, -kInf, 1.0}), OwnedTensor(DType::kFloat32, {kInf, -kInf, 1.0}), Opts());
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.metrics.inf_count, 2);
  EXPECT_EQ(v.metrics.total_finite, 1);
}

TEST(JudgeEdges, NaNMismatchIsReportedBeforeInfMismatch) {
  Verdict v = Judge(OwnedTensor(DType::kFloat32, {kInf, 1.0}), OwnedTensor(DType::kFloat32, {-kInf, kNaN}), Opts());
  EXPECT_EQ(v.error_type, ErrorType::kNaNMismatch);
  EXPECT_EQ(v.metrics.inf_mismatch_count, 1);
}

TEST(JudgeEdges, SubnormalsAreJudgedByValue) {
  const double sub32 = std::ldexp(1.0, -149);
  Verdict v = Judge(OwnedTensor(DType::kFloat32, {sub32, 3 * sub32}), OwnedTensor(DType::kFloat32, {2 * sub32, 3 * sub32}),
                    Opts(Standard::kStrict));
  EXPECT_TRUE(v.passed) << v.error_msg;  // tiny d, within every absolute floor
  EXPECT_EQ(v.metrics.max_abs_diff, sub32);
  const double sub16 = std::ldexp(1.0, -24);
  Verdict h = Judge(OwnedTensor(DType::kFloat16, {sub16}), OwnedTensor(DType::kFloat16, {sub16 * 5}), Opts());
  EXPECT_EQ(h.metrics.max_abs_diff, 4 * sub16);
  EXPECT_TRUE(h.passed);
}

TEST(JudgeEdges, DtypeMismatchCastsActualAndWarns) {
  // float32 actual 1 + 2^-12 rounds to 1.0 in float16: identical after the cast.
  Verdict v = Judge(OwnedTensor(DType::kFloat16, {1.0}), OwnedTensor(DType::kFloat32, {1.0 + std::ldexp(1.0, -12)}), Opts());
  EXPECT_TRUE(v.passed);
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_EQ(v.warnings[0], "dtype_mismatch");
  EXPECT_EQ(v.metrics.max_abs_diff, 0.0);
}

// A float actual against an integer golden: a NaN, an infinity or a value
// outside the golden's range has no integer value (torch's cast gives
// whatever its code path gives: INT_MIN, 0, the low bits), so it is a
// violation on every integer route, even where torch's result would match.
TEST(JudgeCasts, FloatWithoutAnIntegerValueIsAViolation) {
  JudgeOptions quant = Opts();
  quant.input_type = InputType::kFloat;
  Verdict nan = Judge(OwnedTensor(DType::kInt64, Filled(4, 0)), OwnedTensor(DType::kFloat32, Filled(4, kNaN)), quant);
  EXPECT_EQ(nan.route, Route::kQuant);
  EXPECT_FALSE(nan.passed);
  EXPECT_EQ(nan.metrics.discrete->violation_count, 4);
  ASSERT_FALSE(nan.worst.empty());
  EXPECT_TRUE(std::isnan(nan.worst[0].actual));  // reported as it was, not as a cast value
  EXPECT_TRUE(std::isinf(nan.metrics.max_abs_diff));

  Verdict inf = Judge(OwnedTensor(DType::kInt32, {-1, -1}), OwnedTensor(DType::kFloat32, {kInf, -kInf}), Opts());
  EXPECT_EQ(inf.route, Route::kExact);
  EXPECT_FALSE(inf.passed);
  EXPECT_EQ(inf.metrics.discrete->violation_count, 2);

  // 300 in int8 would wrap to 44; 4294967301 in int32 to 5.
  EXPECT_FALSE(Judge(OwnedTensor(DType::kInt8, {44}), OwnedTensor(DType::kFloat32, {300}), quant).passed);
  EXPECT_FALSE(Judge(OwnedTensor(DType::kInt32, {5}), OwnedTensor(DType::kFloat64, {4294967301.0}), Opts()).passed);
  EXPECT_FALSE(Judge(OwnedTensor(DType::kUInt8, {254}), OwnedTensor(DType::kFloat32, {-2.7}), Opts()).passed);
  JudgeOptions bitwise = Opts();
  bitwise.non_compute = true;
  EXPECT_FALSE(Judge(OwnedTensor(DType::kInt16, {0}), OwnedTensor(DType::kFloat32, {kNaN}), bitwise).passed);
}

TEST(JudgeCasts, FloatInRangeTruncatesTowardZero) {
  EXPECT_TRUE(Judge(OwnedTensor(DType::kInt32, {2, -2, 127}), OwnedTensor(DType::kFloat32, {2.7, -2.7, 127.9}), Opts()).passed);
  EXPECT_TRUE(Judge(OwnedTensor(DType::kInt8, {-128}), OwnedTensor(DType::kFloat32, {-128.5}), Opts()).passed);
  // A NaN is non-zero: true, as torch's cast to bool says.
  EXPECT_TRUE(Judge(OwnedTensor(DType::kBool, {1, 0}), OwnedTensor(DType::kFloat32, {kNaN, 0}), Opts()).passed);
}

// torch's 16-bit floats are built from a float: float64 -> float16 rounds to
// float32 first. 1 + 2^-11 + 2^-40 rounds to 1 + 2^-11 in float32, a tie that
// goes to 1.0 in float16; rounded directly it would go up to 1 + 2^-10.
TEST(JudgeCasts, Float64ToSixteenBitsRoundsThroughFloat32) {
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  JudgeOptions bitwise = Opts();
  bitwise.non_compute = true;
  EXPECT_TRUE(Judge(OwnedTensor(DType::kFloat16, {1.0}), OwnedTensor(DType::kFloat64, {x}), bitwise).passed);
  const double y = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_TRUE(Judge(OwnedTensor(DType::kBFloat16, {1.0}), OwnedTensor(DType::kFloat64, {y}), bitwise).passed);
}

// int64 -> float32 rounds once: 2^60 + 2^36 + 1 is just above the halfway
// point, so it goes up to 2^60 + 2^37. Through a double first it would lose
// the +1, become an exact tie and go down to 2^60.
TEST(JudgeCasts, Int64ToFloat32RoundsOnce) {
  const std::uint64_t v = (std::uint64_t{1} << 60) + (std::uint64_t{1} << 36) + 1;
  JudgeOptions bitwise = Opts();
  bitwise.non_compute = true;
  const OwnedTensor actual = OwnedTensor::FromBits(DType::kInt64, {v});
  EXPECT_TRUE(Judge(OwnedTensor(DType::kFloat32, {std::ldexp(1.0, 60) + std::ldexp(1.0, 37)}), actual, bitwise).passed);
  EXPECT_FALSE(Judge(OwnedTensor(DType::kFloat32, {std::ldexp(1.0, 60)}), actual, bitwise).passed);
}

// torch's float -> bfloat16 gives every NaN as 0x7FC0, its sign dropped.
TEST(JudgeCasts, NaNToBFloat16IsTorchsCanonicalNaN) {
  JudgeOptions bitwise = Opts();
  bitwise.non_compute = true;
  const OwnedTensor negative_nan = OwnedTensor::FromBits(DType::kFloat32, {0xFFC00001});
  EXPECT_TRUE(Judge(OwnedTensor::FromBits(DType::kBFloat16, {0x7FC0}), negative_nan, bitwise).passed);
  EXPECT_FALSE(Judge(OwnedTensor::FromBits(DType::kBFloat16, {0xFFC0}), negative_nan, bitwise).passed);
}

TEST(JudgeEdges, SignedZerosDifferOnlyBitwise) {
  OwnedTensor g = OwnedTensor::FromBits(DType::kFloat32, {0x00000000}), a = OwnedTensor::FromBits(DType::kFloat32, {0x80000000});
  EXPECT_TRUE(Judge(g, a, Opts()).passed);
  JudgeOptions o = Opts();
  o.non_compute = true;
  EXPECT_FALSE(Judge(g, a, o).passed);
  EXPECT_TRUE(Judge(g, g, o).passed);
}

TEST(JudgeEdges, NonComputeIntegersCompareBits) {
  JudgeOptions o = Opts();
  o.non_compute = true;
  Verdict v = Judge(OwnedTensor(DType::kInt64, {1, 2, 3}), OwnedTensor(DType::kInt64, {1, 2, 4}), o);
  EXPECT_EQ(v.route, Route::kBitwise);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.metrics.discrete->violation_count, 1);
  EXPECT_EQ(v.metrics.discrete->category, "non_compute");
}

TEST(JudgeEdges, ComplexJudgedOnBothParts) {
  auto g = OwnedTensor::Complex(DType::kComplex64, {{1, 1}, {2, -2}, {3, 0.5}});
  EXPECT_TRUE(Judge(g, g, Opts()).passed);
  auto a = OwnedTensor::Complex(DType::kComplex64, {{1, 1}, {2, -2}, {3, 0.6}});
  Verdict v = Judge(g, a, Opts());
  EXPECT_EQ(v.route, Route::kNpuBenchmark);
  EXPECT_FALSE(v.passed);
  ASSERT_EQ(v.parts.size(), 2u);
  EXPECT_TRUE(v.parts[0].second.npu_benchmark.passed);
  EXPECT_FALSE(v.parts[1].second.npu_benchmark.passed);
  EXPECT_EQ(v.metrics.total, 6);
  ASSERT_FALSE(v.worst.empty());
  EXPECT_EQ(v.worst[0].part, "imag");
  EXPECT_EQ(v.worst[0].index, 2);
  // A real actual against a complex golden has a zero imaginary part.
  Verdict r = Judge(g, OwnedTensor(DType::kFloat32, {1, 2, 3}), Opts());
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.warnings.size(), 1u);
}

TEST(JudgeEdges, Complex32IsJudgedOnItsFloat16Parts) {
  // torch.complex32 (chalf): FlagGems' chalf returns it; two float16 parts.
  for (const char* name : {"complex32", "chalf", "torch.complex32"})
    EXPECT_EQ(ParseDType(name), DType::kComplex32) << name;
  EXPECT_EQ(DTypeSize(DType::kComplex32), 4u);
  EXPECT_TRUE(IsComplex(DType::kComplex32));
  EXPECT_EQ(ComplexPart(DType::kComplex32), DType::kFloat16);
  EXPECT_EQ(PrecisionRank(DType::kComplex32), PrecisionRank(DType::kFloat16));
  auto g = OwnedTensor::Complex(DType::kComplex32, {{1, 1}, {2, -2}, {3, 0.5}});
  Verdict same = Judge(g, g, Opts());
  EXPECT_TRUE(same.passed);
  ASSERT_EQ(same.parts.size(), 2u);
  auto a = OwnedTensor::Complex(DType::kComplex32, {{1, 1}, {2, -2}, {3, 0.625}});
  Verdict v = Judge(g, a, Opts());
  EXPECT_FALSE(v.passed);
  ASSERT_FALSE(v.worst.empty());
  EXPECT_EQ(v.worst[0].part, "imag");
  EXPECT_EQ(v.worst[0].index, 2);
  // Its parts take float16's thresholds, not float32's: one float16 ulp off
  // everywhere passes as complex32 and fails as complex64.
  std::vector<std::complex<double>> golden, off;
  for (int i = 0; i < 64; ++i) {
    const double x = 1.0 + i / 64.0;
    golden.emplace_back(x, -x);
    off.emplace_back(x + std::ldexp(1.0, -10), -x);
  }
  EXPECT_TRUE(Judge(OwnedTensor::Complex(DType::kComplex32, golden),
                    OwnedTensor::Complex(DType::kComplex32, off), Opts())
                  .passed);
  EXPECT_FALSE(Judge(OwnedTensor::Complex(DType::kComplex64, golden),
                     OwnedTensor::Complex(DType::kComplex64, off), Opts())
                   .passed);
}

TEST(JudgeEdges, StridedViewsReadInLogicalOrder) {
  // golden 2x3 row-major; actual the same values stored column-major.
  OwnedTensor g(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  OwnedTensor storage(DType::kFloat32, {6}, {1, 4, 2, 5, 3, 6});
  TensorView a = storage.view();
  a.shape = {2, 3};
  a.strides = {4, 8};
  EXPECT_TRUE(Judge(g, a, Opts()).passed);
  TensorView wrong = TensorView::Contiguous(DType::kFloat32, {2, 3}, storage.view().data);
  EXPECT_FALSE(Judge(g, wrong, Opts()).passed);
}

TEST(JudgeEdges, ThreadCountDoesNotChangeTheVerdict) {
  std::vector<double> g(300000), a(300000);
  for (std::size_t i = 0; i < g.size(); ++i) {
    g[i] = std::sin(static_cast<double>(i)) * 10;
    a[i] = g[i] * (1 + ((i % 97) == 0 ? 3e-3 : 1e-5));
  }
  OwnedTensor gt(DType::kFloat32, g), at(DType::kFloat32, a);
  JudgeOptions one = Opts(), three = Opts();
  one.threads = 1;
  three.threads = 3;
  auto j1 = VerdictToJson(Judge(gt, at, one)), j3 = VerdictToJson(Judge(gt, at, three));
  EXPECT_EQ(j1.dump(), j3.dump());
}

TEST(JudgeJson, NonFiniteNumbersBecomeStrings) {
  Verdict v = Judge(OwnedTensor(DType::kFloat32, {kNaN, 1}), OwnedTensor(DType::kFloat32, {0, 1}), Opts());
  auto json = VerdictToJson(v);
  EXPECT_EQ(json["error_type"], "NaNMismatch");
  EXPECT_EQ(json["worst"][0]["golden"], "NaN");
  EXPECT_EQ(json["route"], "eco");
  EXPECT_TRUE(json["warnings"].is_array());
  Verdict ok = Judge(OwnedTensor(DType::kFloat32, {1}), OwnedTensor(DType::kFloat32, {1}), Opts());
  auto ok_json = VerdictToJson(ok);
  EXPECT_TRUE(ok_json["error_type"].is_null());
  EXPECT_EQ(ok_json["passed"], true);
}

TEST(JudgeJson, SummaryNamesTheFailure) {
  std::vector<double> a = Filled(1000, 1.0);
  a[3] = 1.5;
  std::string text = VerdictSummary(Judge(OwnedTensor(DType::kFloat32, Filled(1000, 1.0)), OwnedTensor(DType::kFloat32, a), Opts()));
  EXPECT_NE(text.find("FAIL"), std::string::npos);
  EXPECT_NE(text.find("AccuracyError"), std::string::npos);
  EXPECT_NE(text.find("[3]"), std::string::npos);
}

}  // namespace
}  // namespace opverify
