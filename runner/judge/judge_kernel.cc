// Compiled once per instruction set; OPVERIFY_KERNEL_NS names the copy.
#include <cmath>
#include <cstring>

#include "runner/judge/float_format.h"
#include "runner/judge/judge_kernel.h"

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
  const __m128i wide = _mm_slli_epi32(_mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))), 16);
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
template <Storage S>
RunStats Run(const void* golden, const void* actual, std::int64_t n, const FloatRules& r) {
  const I4 abs_mask = SplatI(0x7fffffffffffffff);
  const I4 exponent_mask = SplatI(0x7ff0000000000000);
  const I4 ulp_shift = SplatI(r.ulp32_exponent_shift);
  const V4 eco_atol = Splat(r.eco_atol), eco_rtol = Splat(r.eco_rtol);
  const V4 ulp_floor = Splat(r.ulp32_subnormal > r.eco_limit ? r.ulp32_subnormal : r.eco_limit);
  const V4 svt = Splat(r.svt), sve = Splat(r.sve), rel = Splat(r.rel), eps = Splat(1e-7);
  const V4 cap_atol = Splat(r.cap_atol), cap_rtol = Splat(r.cap_rtol);
  const V4 mm_t = Splat(r.mm_threshold);
  I4 eco_matched{}, eco_over{}, npu_small{}, npu_matched{}, cap{};
  V4 npu_sum{}, mm_sum{}, mm_max{}, max_abs{}, max_rel{};
  for (std::int64_t i = 0; i < n; i += 4) {
    const V4 g = Widen<S>(golden, i);
    const V4 a = Widen<S>(actual, i);
    const V4 mag = (V4)((I4)g & abs_mask);
    const V4 d = (V4)((I4)(a - g) & abs_mask);

    const V4 tol = eco_atol + eco_rtol * mag;
    eco_matched -= d <= tol;
    // 32 ULP(|G|) of a normal |G| is |G|'s binade lowered by p - 5; below
    // the smallest normal that bit pattern is negative or tiny, and the
    // floor max(32 * smallest subnormal, limit) takes over, as it must.
    const V4 ulp32_normal = (V4)(((I4)mag & exponent_mask) - ulp_shift);
    eco_over -= d > Max(Max(tol, ulp32_normal), ulp_floor);

    const V4 x = mag + eps;
    const I4 small = mag < svt;
    npu_small -= small;
    npu_matched -= d <= (small ? sve : x * rel);
    cap -= d > cap_atol + cap_rtol * mag;
    const V4 rel_npu = d / x;
    npu_sum += rel_npu;
    max_rel = Max(max_rel, rel_npu);

    const V4 rel_mm = d / Max(mag, mm_t);
    mm_sum += rel_mm;
    mm_max = Max(mm_max, rel_mm);
    max_abs = Max(max_abs, d);
  }
  RunStats s;
  s.mm_rel_sum = SumLanes(mm_sum);
  // A NaN or Inf on either side makes d / max(|G|, T) NaN or Inf (Inf - Inf,
  // Inf / Inf, NaN anything), and so the sum; finite pairs keep it finite
  // unless the float64 difference itself overflows, which the caller's
  // classification then handles like any other non-finite run.
  s.all_finite = std::isfinite(s.mm_rel_sum);
  s.eco_matched = SumLanes(eco_matched);
  s.eco_over = SumLanes(eco_over);
  s.npu_small = SumLanes(npu_small);
  s.npu_matched = SumLanes(npu_matched);
  s.cap_violations = SumLanes(cap);
  s.npu_rel_sum = SumLanes(npu_sum);
  s.mm_rel_max = MaxLanes(mm_max);
  s.max_abs = MaxLanes(max_abs);
  s.max_rel = MaxLanes(max_rel);
  return s;
}

}  // namespace

extern const KernelSet kKernelSet;
const KernelSet kKernelSet = {
    {&Run<Storage::kFloat64>, &Run<Storage::kFloat32>, &Run<Storage::kFloat16>, &Run<Storage::kBFloat16>},
#ifdef OPVERIFY_KERNEL_F16C
    "avx2+f16c",
#else
    "x86-64 baseline",
#endif
};

}  // namespace opverify::kernel::OPVERIFY_KERNEL_NS
