// The fast judge against a plain scalar re-implementation of PRECISION.md,
// written here from the spec's text alone (its own threshold tables, its own
// ULP), on thousands of random tensors whose errors sit near the thresholds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <xmmintrin.h>  // _mm_getcsr, _mm_setcsr

#include "runner/judge/float_format.h"
#include "runner/judge/judge.h"
#include "runner/judge/judge_kernel.h"
#include "tests/support/tensor_builder.h"

namespace opverify {
namespace {

using kernel::Storage;

double P2(int e) { return std::ldexp(1.0, e); }

// ---- the reference ----------------------------------------------------------

struct RefRow {
  bool has_eco;
  double eco_rtol, eco_atol, eco_limit;
  double svt, sve, rel, cap_atol, cap_rtol;
  double t;
  int p;        // mantissa bits, for ULP
  int emin;     // exponent of the smallest normal
};

// PRECISION.md's tables, copied by hand.
RefRow Row(DType dtype, bool hf32) {
  if (dtype == DType::kFloat32 && hf32) return {true, P2(-9), P2(-10), 1e-1, P2(-12), P2(-28), P2(-11), 1e-3, P2(-13), P2(-11), 23, -126};
  switch (dtype) {
    case DType::kFloat16: return {true, P2(-9), P2(-9), 1e-1, P2(-11), P2(-16), P2(-10), 9e-2, P2(-10), P2(-10), 10, -14};
    case DType::kBFloat16: return {true, P2(-6), P2(-6), 1.0, P2(-8), P2(-16), P2(-7), 1e-1, P2(-7), P2(-7), 7, -126};
    case DType::kFloat32: return {true, P2(-10), P2(-16), 1e-2, P2(-14), P2(-30), P2(-13), 1e-3, P2(-13), P2(-13), 23, -126};
    case DType::kFloat8E4M3FN: return {true, P2(-2), P2(-4), 1.0, P2(-4), P2(-6), P2(-3), 1e-3, P2(-13), P2(-3), 3, -6};
    case DType::kFloat8E5M2: return {true, P2(-1), P2(-3), 1e-1, P2(-3), P2(-5), P2(-2), 1e-3, P2(-13), P2(-2), 2, -14};
    default: return {false, 0, 0, 0, P2(-14), P2(-30), P2(-13), 1e-3, P2(-13), P2(-13), 52, -1022};
  }
}

double RefUlp(double x, const RefRow& r) {
  x = std::fabs(x);
  if (x < P2(r.emin)) return P2(r.emin - r.p);
  int e;
  std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1): floor(log2 x) = e - 1
  return P2(e - 1 - r.p);
}

struct RefResult {
  std::string error_type;  // "", "NaNMismatch", "InfMismatch", "AccuracyError"
  bool passed = false;
  std::int64_t finite = 0, nan_count = 0, inf_count = 0;
  std::int64_t eco_matched = 0, eco_over = 0, npu_matched = 0, cap = 0, small = 0, bit_diff = 0;
  long double npu_sum = 0, mm_sum = 0;
  double mm_max = 0, max_abs = 0;
  bool eco_pass = true, npu_pass = true, mm_pass = true;
};

// g, a: values already in the golden dtype; bits: raw bits of both.
RefResult Reference(const std::vector<double>& g, const std::vector<double>& a,
                    const std::vector<std::uint64_t>& gbits, const std::vector<std::uint64_t>& abits,
                    DType dtype, Standard standard, bool non_compute, bool hf32) {
  const RefRow r = Row(dtype, hf32);
  RefResult out;
  bool nan_mismatch = false, inf_mismatch = false;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (gbits[i] != abits[i]) ++out.bit_diff;
    if (std::isnan(g[i]) || std::isnan(a[i])) {
      ++out.nan_count;
      if (std::isnan(g[i]) != std::isnan(a[i])) nan_mismatch = true;
      continue;
    }
    if (std::isinf(g[i]) || std::isinf(a[i])) {
      ++out.inf_count;
      if (g[i] != a[i]) inf_mismatch = true;
      continue;
    }
    ++out.finite;
    const double d = std::fabs(a[i] - g[i]);
    const double ag = std::fabs(g[i]);
    out.max_abs = std::max(out.max_abs, d);
    if (d <= r.eco_atol + r.eco_rtol * ag) ++out.eco_matched;
    const double bound = std::max({r.eco_limit, 32 * RefUlp(ag, r), r.eco_atol + r.eco_rtol * ag});
    if (d > bound) ++out.eco_over;
    const double rel = d / (ag + 1e-7);
    if (ag < r.svt) {
      ++out.small;
      if (d <= r.sve) ++out.npu_matched;
    } else if (rel <= r.rel) {
      ++out.npu_matched;
    }
    if (d > r.cap_atol + r.cap_rtol * ag) ++out.cap;
    out.npu_sum += rel;
    const double mm = d / std::max(ag, r.t);
    out.mm_sum += mm;
    out.mm_max = std::max(out.mm_max, mm);
  }
  const double f = static_cast<double>(out.finite);
  out.eco_pass = (out.finite == 0 || out.eco_matched / f >= 0.99) && out.eco_over == 0;
  const double npu_mere = out.finite ? static_cast<double>(out.npu_sum / out.finite) : 0.0;
  out.npu_pass = out.cap == 0 && (out.finite == 0 || out.npu_matched / f >= 0.9) &&
                 (out.finite == 0 || npu_mere < r.rel);
  const double mere = out.finite ? static_cast<double>(out.mm_sum / out.finite) : 0.0;
  out.mm_pass = mere < r.t && (out.finite ? out.mm_max : 0.0) < 10 * r.t;
  if (nan_mismatch) {
    out.error_type = "NaNMismatch";
  } else if (inf_mismatch) {
    out.error_type = "InfMismatch";
  } else {
    bool pass = false;
    if (non_compute) {
      pass = out.bit_diff == 0;
    } else if (standard == Standard::kEco) {
      pass = r.has_eco ? out.eco_pass : out.npu_pass;
    } else if (standard == Standard::kNpuBenchmark) {
      pass = out.npu_pass;
    } else if (standard == Standard::kMereMare) {
      pass = out.mm_pass;
    } else {
      pass = (r.has_eco ? out.eco_pass : out.npu_pass) && out.mm_pass;
    }
    out.error_type = pass ? "" : "AccuracyError";
  }
  out.passed = out.error_type.empty();
  return out;
}

// ---- random near-threshold tensors -----------------------------------------

struct Generator {
  std::mt19937_64 rng;
  double Uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  bool Chance(double p) { return Uniform(0, 1) < p; }

  double Golden(const RefRow& r) {
    switch (Int(0, 5)) {
      case 0: return 0.0;
      case 1: return Uniform(-1, 1) * r.svt * 2;            // around the small-value threshold
      case 2: return Uniform(-1, 1) * P2(r.emin) * 4;       // subnormal / tiny
      case 3: return std::ldexp(1.0, Int(-6, 6)) * (Chance(0.5) ? 1 : -1);  // powers of two
      default: return Uniform(-1, 1) * std::ldexp(1.0, Int(-8, 8));
    }
  }

  // An error near one of the thresholds that apply at |g|.
  double Error(double g, const RefRow& r) {
    const double ag = std::fabs(g);
    const double scale = Uniform(0.5, 1.5);
    switch (Int(0, 6)) {
      case 0: return 0.0;
      case 1: return scale * (r.eco_atol + r.eco_rtol * ag);
      case 2: return scale * std::max({r.eco_limit, 32 * RefUlp(ag, r), r.eco_atol + r.eco_rtol * ag});
      case 3: return scale * (ag < r.svt ? r.sve : r.rel * (ag + 1e-7));
      case 4: return scale * (r.cap_atol + r.cap_rtol * ag);
      case 5: return scale * r.t * std::max(ag, r.t);
      default: return scale * 10 * r.t * std::max(ag, r.t);
    }
  }
};

DType RandomDType(Generator& gen) {
  static const DType kTypes[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64,
                                 DType::kFloat8E4M3FN, DType::kFloat8E5M2};
  return kTypes[gen.Int(0, 5)];
}

std::uint64_t Bits(DType dtype, double v) { return EncodeFloat(v, FormatOf(dtype)); }

// The values as stored in `dtype` (e4m3fn overflow becomes NaN) and their bits.
struct StoredPair {
  std::vector<double> g, a;
  std::vector<std::uint64_t> gbits, abits;
};

StoredPair Store(DType dtype, const std::vector<double>& g, const std::vector<double>& a) {
  StoredPair out{g, a, std::vector<std::uint64_t>(g.size()), std::vector<std::uint64_t>(a.size())};
  for (std::size_t i = 0; i < g.size(); ++i) {
    out.gbits[i] = Bits(dtype, g[i]);
    out.abits[i] = Bits(dtype, a[i]);
    out.g[i] = DecodeFloat(out.gbits[i], FormatOf(dtype));
    out.a[i] = DecodeFloat(out.abits[i], FormatOf(dtype));
  }
  return out;
}

// Judges the pair and checks every metric against the scalar reference.
void ExpectJudgeMatchesReference(DType dtype, const StoredPair& pair, Standard standard, bool non_compute,
                                 bool hf32, int threads, const std::string& where, bool* passed) {
  const RefRow row = Row(dtype, hf32);
  const RefResult ref = Reference(pair.g, pair.a, pair.gbits, pair.abits, dtype, standard, non_compute, hf32);
  JudgeOptions options;
  options.standard = standard;
  options.non_compute = non_compute;
  options.precision_mode = hf32 ? PrecisionMode::kHF32 : PrecisionMode::kNone;
  options.threads = threads;
  Verdict v = Judge(testing::OwnedTensor::FromBits(dtype, pair.gbits),
                    testing::OwnedTensor::FromBits(dtype, pair.abits), options);
  const OutputMetrics& m = v.metrics;
  ASSERT_EQ(std::string(ErrorTypeName(v.error_type)), ref.error_type) << where << ": " << v.error_msg;
  ASSERT_EQ(v.passed, ref.passed) << where;
  ASSERT_EQ(m.total_finite, ref.finite) << where;
  ASSERT_EQ(m.nan_count, ref.nan_count) << where;
  ASSERT_EQ(m.inf_count, ref.inf_count) << where;
  ASSERT_EQ(m.max_abs_diff, ref.max_abs) << where;
  ASSERT_EQ(m.eco.has_value(), row.has_eco) << where;
  if (row.has_eco) {
    ASSERT_EQ(m.eco->matched_count, ref.eco_matched) << where;
    ASSERT_EQ(m.eco->over_count, ref.eco_over) << where;
    ASSERT_EQ(m.eco->passed, ref.eco_pass) << where;
  }
  ASSERT_EQ(m.npu_benchmark.matched_count, ref.npu_matched) << where;
  ASSERT_EQ(m.npu_benchmark.max_error_cap_violation_count, ref.cap) << where;
  ASSERT_EQ(m.npu_benchmark.small_count, ref.small) << where;
  ASSERT_EQ(m.npu_benchmark.passed, ref.npu_pass) << where;
  ASSERT_EQ(m.mere_mare.passed, ref.mm_pass) << where;
  ASSERT_EQ(m.mere_mare.mare, ref.finite ? ref.mm_max : 0.0) << where;
  if (ref.finite) {
    ASSERT_NEAR(m.mere_mare.mere, static_cast<double>(ref.mm_sum / ref.finite), 1e-12 * m.mere_mare.mere + 1e-300) << where;
    ASSERT_NEAR(m.npu_benchmark.mere, static_cast<double>(ref.npu_sum / ref.finite), 1e-12 * m.npu_benchmark.mere + 1e-300) << where;
  }
  if (non_compute) {
    ASSERT_EQ(m.discrete->violation_count, ref.bit_diff) << where;
  }
  *passed = v.passed;
}

TEST(JudgeProperty, FastJudgeAgreesWithScalarReference) {
  Generator gen{std::mt19937_64(20261129)};
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  int cases = 0, failures_seen = 0, passes_seen = 0;
  for (int iteration = 0; iteration < 4000; ++iteration) {
    const DType dtype = RandomDType(gen);
    const Standard standard = static_cast<Standard>(gen.Int(0, 3));
    const bool hf32 = dtype == DType::kFloat32 && gen.Chance(0.3);
    const bool non_compute = gen.Chance(0.05);
    const RefRow row = Row(dtype, hf32);
    // Mostly small tensors; some cross block boundaries or use several threads.
    const int n = gen.Chance(0.1) ? gen.Int(2000, 9000) : gen.Int(0, 300);
    // A sparse error pattern sits near the matched-ratio bounds.
    const double error_rate = std::vector<double>{0.0, 0.005, 0.01, 0.011, 0.1, 0.5, 1.0}[gen.Int(0, 6)];
    std::vector<double> g(n), a(n);
    for (int i = 0; i < n; ++i) {
      g[i] = RoundToDType(gen.Golden(row), dtype);
      const double e = gen.Chance(error_rate) ? gen.Error(g[i], row) * (gen.Chance(0.5) ? 1 : -1) : 0.0;
      a[i] = RoundToDType(g[i] + e, dtype);
      if (gen.Chance(0.002)) {  // specials: mostly agreeing, sometimes not
        const double special = gen.Chance(0.5) ? kNaN : (gen.Chance(0.5) ? kInf : -kInf);
        g[i] = special;
        a[i] = gen.Chance(0.8) ? special : (gen.Chance(0.5) ? 1.0 : -special);
        if (std::isinf(special) && dtype == DType::kFloat8E4M3FN) g[i] = a[i] = kNaN;  // no Inf in e4m3fn
      }
    }
    const std::string where = "iteration " + std::to_string(iteration) + " " + std::string(DTypeName(dtype)) +
                              " n=" + std::to_string(n) + " standard " + std::string(StandardName(standard));
    bool passed = false;
    ExpectJudgeMatchesReference(dtype, Store(dtype, g, a), standard, non_compute, hf32, gen.Int(1, 3), where,
                                &passed);
    ASSERT_FALSE(HasFatalFailure());
    ++cases;
    (passed ? passes_seen : failures_seen)++;
  }
  // The generator must exercise both outcomes in earnest.
  EXPECT_EQ(cases, 4000);
  EXPECT_GT(passes_seen, 800);
  EXPECT_GT(failures_seen, 800);
}

// ---- float16 and bfloat16: the float32 screen and its float64 fallback ------

// The kernel rules of a 16-bit row, from the spec's tables above.
kernel::FloatRules KernelRules(const RefRow& r) {
  // In FloatRules' order: eco atol, rtol, limit; 32 ULP; npu svt, sve, rel, cap; T.
  return {r.eco_atol, r.eco_rtol, r.eco_limit, 32 * P2(r.emin - r.p), static_cast<std::int64_t>(r.p - 5) << 52,
          r.svt,      r.sve,      r.rel,       r.cap_atol,           r.cap_rtol,
          r.t};
}

// The largest finite value of the format.
double MaxFinite(DType dtype) { return dtype == DType::kFloat16 ? 65504.0 : std::ldexp(255.0, 120); }

// An actual for golden g: equal, near a threshold, exactly at one, a few ULP
// off, or anything at all (any exponent, so differences are inexact in float32).
double SixteenBitActual(Generator& gen, double g, DType dtype, const RefRow& r, double error_rate) {
  if (!gen.Chance(error_rate)) return g;
  const double sign = gen.Chance(0.5) ? 1 : -1;
  const double ag = std::fabs(g);
  switch (gen.Int(0, 5)) {
    case 0: return g + sign * gen.Error(g, r);
    case 1: return g + sign * (ag < r.svt ? r.sve : r.rel * ag);  // the screen's own bound
    case 2: return g + sign * gen.Int(1, 3) * RefUlp(g, r);
    case 3: return g + sign * (r.eco_atol + r.eco_rtol * ag);
    case 4: return sign * std::ldexp(gen.Uniform(1, 2), gen.Int(r.emin - r.p, 15));
    default: return sign * MaxFinite(dtype) * (gen.Chance(0.5) ? 1 : gen.Uniform(0, 1));
  }
}

double SixteenBitGolden(Generator& gen, DType dtype, const RefRow& r) {
  switch (gen.Int(0, 9)) {
    case 0: return std::ldexp(gen.Uniform(-1, 1), gen.Int(r.emin - r.p, r.emin));  // subnormal, tiny
    case 1: return MaxFinite(dtype) * gen.Uniform(-1, 1);                             // huge
    case 2: return (gen.Chance(0.5) ? 1 : -1) * r.svt;                                // the small bound
    default: return gen.Golden(r);
  }
}

TEST(JudgeProperty, SixteenBitScreenAgreesWithFloat64AndReference) {
  Generator gen{std::mt19937_64(20261130)};
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr std::int64_t kRun = 2048;  // the judge's block
  std::int64_t screened_groups = 0, float64_groups = 0, mixed_runs = 0, nonfinite_runs = 0;
  for (int iteration = 0; iteration < 2000; ++iteration) {
    const DType dtype = gen.Chance(0.5) ? DType::kFloat16 : DType::kBFloat16;
    const Storage storage = dtype == DType::kFloat16 ? Storage::kFloat16 : Storage::kBFloat16;
    const RefRow row = Row(dtype, false);
    const int n = static_cast<int>(kRun) * gen.Int(1, 2) + (gen.Chance(0.3) ? gen.Int(1, 300) : 0);
    const double error_rate = std::vector<double>{0.0, 0.001, 0.01, 0.1, 0.5, 1.0}[gen.Int(0, 5)];
    const double special_rate = gen.Chance(0.2) ? 0.001 : 0.0;
    std::vector<double> g(n), a(n);
    for (int i = 0; i < n; ++i) {
      g[i] = RoundToDType(SixteenBitGolden(gen, dtype, row), dtype);
      a[i] = RoundToDType(SixteenBitActual(gen, g[i], dtype, row, error_rate), dtype);
      if (gen.Chance(special_rate)) {
        const double special = gen.Chance(0.5) ? kNaN : (gen.Chance(0.5) ? kInf : -kInf);
        (gen.Chance(0.5) ? g[i] : a[i]) = special;
        if (gen.Chance(0.5)) g[i] = a[i] = special;
      }
    }
    const StoredPair pair = Store(dtype, g, a);
    const std::string where = "iteration " + std::to_string(iteration) + " " + std::string(DTypeName(dtype)) +
                              " n=" + std::to_string(n);

    // The 16-bit kernel against the float64 kernel on the same values, bit for bit.
    const kernel::FloatRules rules = KernelRules(row);
    std::vector<std::uint16_t> g16(pair.gbits.begin(), pair.gbits.end()), a16(pair.abits.begin(), pair.abits.end());
    for (std::int64_t start = 0; start + kRun <= n; start += kRun) {
      const kernel::RunStats fast = kernel::Kernels().run[static_cast<int>(storage)](
          g16.data() + start, a16.data() + start, kRun, rules);
      const kernel::RunStats plain = kernel::Kernels().run[static_cast<int>(Storage::kFloat64)](
          pair.g.data() + start, pair.a.data() + start, kRun, rules);
      ASSERT_EQ(fast.all_finite, plain.all_finite) << where << " run at " << start;
      if (!plain.all_finite) {
        ++nonfinite_runs;
        continue;
      }
      const std::string at = where + " run at " + std::to_string(start);
      EXPECT_EQ(fast.eco_matched, plain.eco_matched) << at;
      EXPECT_EQ(fast.eco_over, plain.eco_over) << at;
      EXPECT_EQ(fast.npu_small, plain.npu_small) << at;
      EXPECT_EQ(fast.npu_matched, plain.npu_matched) << at;
      EXPECT_EQ(fast.cap_violations, plain.cap_violations) << at;
      // Bit for bit: == would let -0 pass for +0.
      for (const auto& [x, y] : {std::pair{fast.npu_rel_sum, plain.npu_rel_sum}, {fast.mm_rel_sum, plain.mm_rel_sum},
                                 {fast.mm_rel_max, plain.mm_rel_max}, {fast.max_abs, plain.max_abs},
                                 {fast.max_rel, plain.max_rel}}) {
        ASSERT_EQ(std::memcmp(&x, &y, sizeof x), 0) << at << ": " << x << " vs " << y;
      }
      ASSERT_FALSE(HasFailure());
      float64_groups += fast.float64_groups;
      screened_groups += kRun / 4 - fast.float64_groups;
      if (fast.float64_groups > 0 && fast.float64_groups < kRun / 4) ++mixed_runs;
    }

    // The whole judge against the scalar reference.
    bool passed = false;
    ExpectJudgeMatchesReference(dtype, pair, static_cast<Standard>(gen.Int(0, 3)), false, false, gen.Int(1, 3),
                                where, &passed);
    ASSERT_FALSE(HasFatalFailure());
  }
  // Both branches, in earnest, and often within one run.
  EXPECT_GT(screened_groups, 100000);
  EXPECT_GT(float64_groups, 100000);
  EXPECT_GT(mixed_runs, 500);
  EXPECT_GT(nonfinite_runs, 100);
}

// Code built with fast-math may set flush-to-zero; the screen's float32
// differences of bfloat16 subnormals would then vanish, so it must step aside.
TEST(JudgeProperty, SixteenBitScreenKeepsSubnormalDifferencesUnderFlushToZero) {
  const RefRow row = Row(DType::kBFloat16, false);
  std::vector<double> g(2048), a(2048);
  for (std::size_t i = 0; i < g.size(); ++i) {
    g[i] = std::ldexp(1.0, -130 - static_cast<int>(i % 3));
    a[i] = i % 5 == 0 ? std::ldexp(1.0, -132) : g[i];
  }
  const StoredPair pair = Store(DType::kBFloat16, g, a);
  const std::vector<std::uint16_t> g16(pair.gbits.begin(), pair.gbits.end()), a16(pair.abits.begin(), pair.abits.end());
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(csr | 0x8000);  // FTZ
  const kernel::RunStats fast = kernel::Kernels().run[static_cast<int>(Storage::kBFloat16)](
      g16.data(), a16.data(), 2048, KernelRules(row));
  _mm_setcsr(csr);
  const kernel::RunStats plain = kernel::Kernels().run[static_cast<int>(Storage::kFloat64)](
      pair.g.data(), pair.a.data(), 2048, KernelRules(row));
  EXPECT_GT(plain.max_abs, 0.0);
  EXPECT_EQ(fast.max_abs, plain.max_abs);
  EXPECT_EQ(fast.npu_rel_sum, plain.npu_rel_sum);
  EXPECT_EQ(fast.mm_rel_sum, plain.mm_rel_sum);
}

}  // namespace
}  // namespace opverify
