// Compiled once per instruction set; OPVERIFY_KERNEL_NS names the copy.
#include <array>
#include <cmath>
#include <cstring>

#include "runner/judge/float_format.h"
#include "runner/judge/judge_kernel.h"

#include <xmmintrin.h>  // _mm_getcsr

#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
#define OPVERIFY_KERNEL_F16C 1
#endif

#ifndef OPVERIFY_KERNEL_NS
#error "compile with -DOPVERIFY_KERNEL_NS=<name>"
#endif

namespace opverify::kernel::OPVERIFY_KERNEL_NS {
namespace {

using V4 = double __attribute__((vector_size(32)));
using I4 = std::int64_t __attribute__((vector_size(32)));
using F4 = float __attribute__((vector_size(16)));
using U4 = std::uint32_t __attribute__((vector_size(16)));
using H4 = std::uint16_t __attribute__((vector_size(8)));

inline V4 Splat(double x) { return V4{x, x, x, x}; }
inline I4 SplatI(std::int64_t x) { return I4{x, x, x, x}; }

// max of two non-NaN vectors.
inline V4 Max(V4 a, V4 b) {
#ifdef __AVX__
  return _mm256_max_pd(a, b);
#else
  return a > b ? a : b;
#endif
}

template <typename T>
inline T LoadBytes(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Four elements of storage S, widened exactly to double.
template <Storage S>
inline V4 Widen(const void* base, std::int64_t i);

template <>
inline V4 Widen<Storage::kFloat64>(const void* base, std::int64_t i) {
  return LoadBytes<V4>(static_cast<const double*>(base) + i);
}

template <>
inline V4 Widen<Storage::kFloat32>(const void* base, std::int64_t i) {
  const float* p = static_cast<const float*>(base) + i;
#ifdef OPVERIFY_KERNEL_F16C
  return _mm256_cvtps_pd(_mm_loadu_ps(p));
#else
  return __builtin_convertvector(LoadBytes<F4>(p), V4);
#endif
}

template <>
inline V4 Widen<Storage::kBFloat16>(const void* base, std::int64_t i) {
  const auto* p = static_cast<const std::uint16_t*>(base) + i;
#ifdef OPVERIFY_KERNEL_F16C
  const __m128i wide =
      _mm_slli_epi32(_mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))), 16);
  return _mm256_cvtps_pd(_mm_castsi128_ps(wide));
#else
  const U4 wide = __builtin_convertvector(LoadBytes<H4>(p), U4) << 16;
  return __builtin_convertvector((F4)wide, V4);
#endif
}

template <>
inline V4 Widen<Storage::kFloat16>(const void* base, std::int64_t i) {
  const auto* p = static_cast<const std::uint16_t*>(base) + i;
#ifdef OPVERIFY_KERNEL_F16C
  return _mm256_cvtps_pd(_mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
#else
  const float* table = Float16Table();
  const H4 h = LoadBytes<H4>(p);
  return V4{table[h[0]], table[h[1]], table[h[2]], table[h[3]]};
#endif
}

inline double SumLanes(V4 v) { return (v[0] + v[1]) + (v[2] + v[3]); }
inline double MaxLanes(V4 v) {
  const double a = v[0] > v[1] ? v[0] : v[1], b = v[2] > v[3] ? v[2] : v[3];
  return a > b ? a : b;
}
inline std::int64_t SumLanes(I4 v) { return (v[0] + v[1]) + (v[2] + v[3]); }

// The per-lane totals of one run: element i always lands in lane i % 4.
struct LaneTotals {
  I4 eco_matched{}, eco_over{}, npu_small{}, npu_matched{}, cap{};
  V4 npu_sum{}, mm_sum{}, mm_max{}, max_abs{}, max_rel{};
};

// PRECISION.md's formulas, once for every lane (comparison masks are -1/0):
//   d = |A - G|
//   eco matched: d <= atol + rtol |G|
//   eco over:    d > max(limit, 32 ULP(|G|), atol + rtol |G|)
//   npu small:   |G| < svt; matched: small ? d <= sve : d / (|G| + 1e-7) <= rel
//                (tested as d <= (|G| + 1e-7) * rel, which is the same for a
//                power-of-two rel: the product is exact, and a quotient that
//                rounds down to rel exceeds it by less than half an ULP)
//   npu cap:     d > cap_atol + cap_rtol |G| is a violation
//   mere_mare:   d / max(|G|, T)
class LaneRules {
 public:
  explicit LaneRules(const FloatRules& r)
      : ulp_shift_(SplatI(r.ulp32_exponent_shift)),
        eco_atol_(Splat(r.eco_atol)),
        eco_rtol_(Splat(r.eco_rtol)),
        ulp_floor_(Splat(r.ulp32_subnormal > r.eco_limit ? r.ulp32_subnormal : r.eco_limit)),
        svt_(Splat(r.svt)),
        sve_(Splat(r.sve)),
        rel_(Splat(r.rel)),
        cap_atol_(Splat(r.cap_atol)),
        cap_rtol_(Splat(r.cap_rtol)),
        mm_t_(Splat(r.mm_threshold)) {}

  static V4 Abs(V4 v) { return (V4)((I4)v & SplatI(0x7fffffffffffffff)); }

  // The counts of four pairs with |G| = mag and d; npu_small only if asked.
  template <bool kCountSmall>
  void Count(V4 mag, V4 d, LaneTotals* t) const {
    const V4 tol = eco_atol_ + eco_rtol_ * mag;
    t->eco_matched -= d <= tol;
    // 32 ULP(|G|) of a normal |G| is |G|'s binade lowered by p - 5; below
    // the smallest normal that bit pattern is negative or tiny, and the
    // floor max(32 * smallest subnormal, limit) takes over, as it must.
    const V4 ulp32_normal = (V4)(((I4)mag & SplatI(0x7ff0000000000000)) - ulp_shift_);
    t->eco_over -= d > Max(Max(tol, ulp32_normal), ulp_floor_);
    const I4 small = mag < svt_;
    if (kCountSmall) t->npu_small -= small;
    t->npu_matched -= d <= (small ? sve_ : (mag + Splat(1e-7)) * rel_);
    t->cap -= d > cap_atol_ + cap_rtol_ * mag;
  }

  // The relative errors of four pairs: their sums and maxima, and max d.
  void Relate(V4 mag, V4 d, LaneTotals* t) const {
    const V4 rel_npu = d / (mag + Splat(1e-7));
    t->npu_sum += rel_npu;
    t->max_rel = Max(t->max_rel, rel_npu);
    const V4 rel_mm = d / Max(mag, mm_t_);
    t->mm_sum += rel_mm;
    t->mm_max = Max(t->mm_max, rel_mm);
    t->max_abs = Max(t->max_abs, d);
  }

 private:
  I4 ulp_shift_;
  V4 eco_atol_, eco_rtol_, ulp_floor_, svt_, sve_, rel_, cap_atol_, cap_rtol_, mm_t_;
};

RunStats Finish(const LaneTotals& t) {
  RunStats s;
  s.mm_rel_sum = SumLanes(t.mm_sum);
  // A NaN or Inf on either side makes d / max(|G|, T) NaN or Inf (Inf - Inf,
  // Inf / Inf, NaN anything), and so the sum; finite pairs keep it finite
  // unless the float64 difference itself overflows, which the caller's
  // classification then handles like any other non-finite run.
  s.all_finite = std::isfinite(s.mm_rel_sum);
  s.eco_matched = SumLanes(t.eco_matched);
  s.eco_over = SumLanes(t.eco_over);
  s.npu_small = SumLanes(t.npu_small);
  s.npu_matched = SumLanes(t.npu_matched);
  s.cap_violations = SumLanes(t.cap);
  s.npu_rel_sum = SumLanes(t.npu_sum);
  s.mm_rel_max = MaxLanes(t.mm_max);
  s.max_abs = MaxLanes(t.max_abs);
  s.max_rel = MaxLanes(t.max_rel);
  return s;
}

// Pairs [begin, end) through the float64 formulas.
template <Storage S>
void RunRange(const void* golden, const void* actual, std::int64_t begin, std::int64_t end,
              const LaneRules& rules, LaneTotals* t) {
  for (std::int64_t i = begin; i < end; i += 4) {
    const V4 g = Widen<S>(golden, i);
    const V4 a = Widen<S>(actual, i);
    const V4 mag = LaneRules::Abs(g);
    const V4 d = LaneRules::Abs(a - g);
    rules.Count<true>(mag, d, t);
    rules.Relate(mag, d, t);
  }
}

// Every pair through the float64 formulas.
template <Storage S>
RunStats Run(const void* golden, const void* actual, std::int64_t n, const FloatRules& r) {
  LaneTotals t;
  RunRange<S>(golden, actual, 0, n, LaneRules(r), &t);
  return Finish(t);
}

// ---- 16-bit storage: a float32 screen in eight lanes --------------------------
//
// A float16 or bfloat16 value is exact in float32. For each pair the screen
// computes, in float32, mag = |G|, d32 = |A - G| (the float32 rounding of the
// exact difference, which may be inexact) and the bound
//   b = sve        if mag < svt  (the npu small test, exact in float32)
//   b = rel * mag  otherwise     (exact: rel is a power of two, no underflow)
// and calls the pair settled when d32 < b. Rounding is monotone and b is a
// float32, so the exact difference is below b and its float64 rounding, the
// d of Run, is at most b. Then d is within every bound Run tests, so the
// pair is eco-matched and npu-matched, not eco-over and no cap violation:
//   small:  d <= sve <= eco_atol <= atol + rtol |G| and likewise for the cap;
//   normal: d <= rel |G| <= rel (|G| + 1e-7), and rel |G| <= rtol |G| for
//           the eco and cap rtol (both at least rel),
// each bound computed in float64 being at least these (rounding is
// monotone), and eco-over needs d above a maximum that includes the eco
// bound. ScreenApplies checks the conditions used (true for the float16
// and bfloat16 rows). What remains of a settled pair is the npu small count,
// exact in float32, and its relative errors.
//
// Four-pair groups (aligned, so lane i % 4 is kept) whose d are all 0 add
// nothing to any sum or maximum (each term is +0; and d = 0 is settled, as
// b > 0) and are skipped. The other groups are listed in index order and
// judged in float64: the relative errors for each, and the counts too for
// groups with an unsettled pair (NaN and Inf included: d32 < b is false for
// them). The float64 sums therefore add the same nonzero terms in the same
// lanes in the same order as Run, and give the same bits.

using F8 = float __attribute__((vector_size(32)));
using I8 = std::int32_t __attribute__((vector_size(32)));
using U8 = std::uint32_t __attribute__((vector_size(32)));
using H8 = std::uint16_t __attribute__((vector_size(16)));

inline F8 SplatF(float x) { return F8{x, x, x, x, x, x, x, x}; }

// Eight elements of 16-bit storage S, widened exactly to float.
template <Storage S>
inline F8 Widen8(const void* base, std::int64_t i);

template <>
inline F8 Widen8<Storage::kBFloat16>(const void* base, std::int64_t i) {
  const auto* p = static_cast<const std::uint16_t*>(base) + i;
#ifdef OPVERIFY_KERNEL_F16C
  const __m256i wide = _mm256_slli_epi32(
      _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16);
  return (F8)_mm256_castsi256_ps(wide);
#else
  return (F8)(__builtin_convertvector(LoadBytes<H8>(p), U8) << 16);
#endif
}

template <>
inline F8 Widen8<Storage::kFloat16>(const void* base, std::int64_t i) {
  const auto* p = static_cast<const std::uint16_t*>(base) + i;
#ifdef OPVERIFY_KERNEL_F16C
  return (F8)_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#else
  const float* table = Float16Table();
  const H8 h = LoadBytes<H8>(p);
  return F8{table[h[0]], table[h[1]], table[h[2]], table[h[3]],
            table[h[4]], table[h[5]], table[h[6]], table[h[7]]};
#endif
}

// Bit k set where lane k of the mask is set.
inline unsigned LaneBits(I8 mask) {
#ifdef OPVERIFY_KERNEL_F16C
  return static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps((__m256i)mask)));
#else
  unsigned bits = 0;
  for (int k = 0; k < 8; ++k) bits |= (mask[k] != 0 ? 1u : 0u) << k;
  return bits;
#endif
}

bool IsFloat32(double x) { return static_cast<double>(static_cast<float>(x)) == x; }

// Whether the screen's argument holds for these rules (it does for the
// float16 and bfloat16 rows; anything else takes Run). Subnormal float32
// results must not be flushed to zero (FTZ/DAZ, which fast-math code may set).
bool ScreenApplies(const FloatRules& r) {
  constexpr unsigned kFlushToZero = 0x8000, kDenormalsAreZero = 0x0040;
  if ((_mm_getcsr() & (kFlushToZero | kDenormalsAreZero)) != 0) return false;
  int exponent = 0;
  const bool rel_power_of_two = std::frexp(r.rel, &exponent) == 0.5;
  return rel_power_of_two && r.rel <= 1 && r.rel * r.svt >= std::ldexp(1.0, -126) &&
         IsFloat32(r.svt) && IsFloat32(r.sve) && r.sve > 0 && r.eco_atol >= r.sve &&
         r.cap_atol >= r.sve && r.eco_rtol >= r.rel && r.cap_rtol >= r.rel;
}

constexpr std::int64_t kScreenChunk = 512;  // pairs screened before their listed groups are judged
constexpr std::int64_t kScreenStep = 32;  // pairs screened at once: eight groups, one byte of flags

// For the lane bits of eight lanes: bit j set where group j (lanes 4j..4j+3)
// has a lane whose bit is clear.
constexpr std::array<std::uint8_t, 256> kGroupHasClearLane = [] {
  std::array<std::uint8_t, 256> table{};
  for (unsigned bits = 0; bits < 256; ++bits) {
    table[bits] =
        static_cast<std::uint8_t>(((bits & 0xf) != 0xf ? 1 : 0) | ((bits >> 4) != 0xf ? 2 : 0));
  }
  return table;
}();

using G8 = std::uint16_t __attribute__((vector_size(16)));

// For a byte of group flags: the positions of its set bits, in order (unused
// slots 0), and how many there are.
struct GroupPositions {
  std::array<std::array<std::uint16_t, 8>, 256> positions;
  std::array<std::uint8_t, 256> count;
};
constexpr GroupPositions kGroupPositions = [] {
  GroupPositions table{};
  for (unsigned flags = 0; flags < 256; ++flags) {
    int count = 0;
    for (int bit = 0; bit < 8; ++bit) {
      if (flags >> bit & 1) table.positions[flags][count++] = static_cast<std::uint16_t>(bit);
    }
    table.count[flags] = static_cast<std::uint8_t>(count);
  }
  return table;
}();

// The screen's float32 constants: |x| by mask, and the bound b's terms.
struct ScreenRules {
  explicit ScreenRules(const FloatRules& r)
      : svt(SplatF(static_cast<float>(r.svt))),
        sve(SplatF(static_cast<float>(r.sve))),
        rel(SplatF(static_cast<float>(r.rel))) {}
  I8 abs_mask = I8{} + 0x7fffffff;
  F8 svt, sve, rel;
};

// The screen of pairs [chunk, end): the groups with a nonzero d listed in
// `listed` (index within the chunk; eight slots of slack for the last store),
// one bit per group in `unsettled`, set if a pair is unsettled, and the small
// pairs counted in `small`. Returns how many groups are listed. Inlined:
// the loop is RunScreened's own.
template <Storage S>
[[gnu::always_inline]] inline int ScreenChunk(const void* golden, const void* actual,
                                              std::int64_t chunk, std::int64_t end,
                                              const ScreenRules& screen, I8* small,
                                              std::uint16_t* listed, std::uint8_t* unsettled) {
  int count = 0;
  for (std::int64_t i = chunk; i < end; i += kScreenStep) {
    unsigned listed_flags = 0, unsettled_flags = 0;
    for (int v = 0; v < 4; ++v) {
      const F8 g = Widen8<S>(golden, i + 8 * v);
      const F8 a = Widen8<S>(actual, i + 8 * v);
      const F8 mag = (F8)((I8)g & screen.abs_mask);
      const F8 d = (F8)((I8)(a - g) & screen.abs_mask);
      const I8 is_small = mag < screen.svt;
      *small -= is_small;
      // A pair with d = 0 is settled (b > 0), so a group whose d are all 0 is
      // settled and adds nothing: only groups with a nonzero d are listed.
      listed_flags |= static_cast<unsigned>(kGroupHasClearLane[LaneBits(d == 0)]) << (2 * v);
      unsettled_flags |=
          static_cast<unsigned>(
              kGroupHasClearLane[LaneBits(d < (is_small ? screen.sve : screen.rel * mag))])
          << (2 * v);
    }
    const G8 positions = LoadBytes<G8>(kGroupPositions.positions[listed_flags].data()) +
                         static_cast<std::uint16_t>((i - chunk) / 4);
    std::memcpy(listed + count, &positions, sizeof positions);
    count += kGroupPositions.count[listed_flags];
    unsettled[(i - chunk) / kScreenStep] = static_cast<std::uint8_t>(unsettled_flags);
  }
  return count;
}

// The `count` listed groups of the chunk at `chunk` judged in float64: the
// relative errors of each, the counts too of the unsettled ones. Returns
// how many were unsettled. Inlined: the loop is RunScreened's own.
template <Storage S>
[[gnu::always_inline]] inline std::int64_t JudgeListed(const void* golden, const void* actual,
                                                       std::int64_t chunk, std::int64_t end,
                                                       const std::uint16_t* listed, int count,
                                                       const std::uint8_t* unsettled,
                                                       const LaneRules& rules, LaneTotals* t) {
  std::int64_t unsettled_groups = 0;
  // The float64 pass issues no loads the hardware prefetcher would follow:
  // meanwhile fetch the next chunk's pairs (the judge's next block when this
  // run is one block; past the end of the tensor a prefetch is harmless).
  const auto next_golden = reinterpret_cast<std::uintptr_t>(golden) + end * sizeof(std::uint16_t);
  const auto next_actual = reinterpret_cast<std::uintptr_t>(actual) + end * sizeof(std::uint16_t);
  constexpr int kLines = kScreenChunk * sizeof(std::uint16_t) / 64;
  for (int k = 0; k < count; ++k) {
    if (k < kLines) {
      __builtin_prefetch(reinterpret_cast<const void*>(next_golden + 64 * k));
      __builtin_prefetch(reinterpret_cast<const void*>(next_actual + 64 * k));
    }
    const unsigned group = listed[k];
    const std::int64_t i = chunk + 4 * static_cast<std::int64_t>(group);
    const V4 g = Widen<S>(golden, i);
    const V4 a = Widen<S>(actual, i);
    const V4 mag = LaneRules::Abs(g);
    const V4 d = LaneRules::Abs(a - g);
    if (unsettled[group / 8] >> (group % 8) & 1) {
      rules.Count<false>(mag, d, t);
      ++unsettled_groups;
    }
    rules.Relate(mag, d, t);
  }
  for (int k = count; k < kLines; ++k) {
    __builtin_prefetch(reinterpret_cast<const void*>(next_golden + 64 * k));
    __builtin_prefetch(reinterpret_cast<const void*>(next_actual + 64 * k));
  }
  return unsettled_groups;
}

template <Storage S>
RunStats RunScreened(const void* golden, const void* actual, std::int64_t n, const FloatRules& r) {
  if (n % kScreenStep != 0 || !ScreenApplies(r)) return Run<S>(golden, actual, n, r);
  const LaneRules rules(r);
  const ScreenRules screen(r);
  LaneTotals t;
  I8 small{};
  std::int64_t unsettled_groups = 0;
  // Per chunk: the listed groups and the unsettled flags (ScreenChunk).
  std::uint16_t listed[kScreenChunk / 4 + 8];
  std::uint8_t unsettled[kScreenChunk / kScreenStep];
  for (std::int64_t chunk = 0; chunk < n; chunk += kScreenChunk) {
    const std::int64_t end = n - chunk < kScreenChunk ? n : chunk + kScreenChunk;
    const int count = ScreenChunk<S>(golden, actual, chunk, end, screen, &small, listed, unsettled);
    const std::int64_t unsettled_in_chunk =
        JudgeListed<S>(golden, actual, chunk, end, listed, count, unsettled, rules, &t);
    unsettled_groups += unsettled_in_chunk;
    // Where most groups are unsettled (an output far off) the screen only
    // adds work: judge the rest of the run in float64 as Run does, in order.
    if (unsettled_in_chunk * 4 > (end - chunk) / 4 * 3) {
      RunRange<S>(golden, actual, end, n, rules, &t);
      unsettled_groups += (n - end) / 4;
      break;
    }
  }
  RunStats s = Finish(t);
  const std::int64_t settled_pairs = n - 4 * unsettled_groups;
  s.eco_matched += settled_pairs;
  s.npu_matched += settled_pairs;
  for (int k = 0; k < 8; ++k) s.npu_small += small[k];
  s.float64_groups = unsettled_groups;
  return s;
}

}  // namespace

extern const KernelSet kKernelSet;
const KernelSet kKernelSet = {
    {&Run<Storage::kFloat64>, &Run<Storage::kFloat32>, &RunScreened<Storage::kFloat16>,
     &RunScreened<Storage::kBFloat16>},
#ifdef OPVERIFY_KERNEL_F16C
    "avx2+f16c",
#else
    "x86-64 baseline",
#endif
};

}  // namespace opverify::kernel::OPVERIFY_KERNEL_NS
