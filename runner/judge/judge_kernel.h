// The judge's inner loop: every float rule of PRECISION.md over a run of
// finite element pairs, four float64 lanes at a time, reading the tensors'
// own storage (float64/32/16, bfloat16) or pre-decoded doubles. float16 and
// bfloat16 pairs are first screened in eight float32 lanes, and only groups
// of four that the screen cannot settle, or whose differences are not all
// zero, go through the float64 formulas (judge_kernel.cc says why the
// results are the same bits).
//
// The same source is compiled twice, for AVX2+F16C and for baseline x86-64
// (judge_kernel.cc with OPVERIFY_KERNEL_NS), and Kernels() picks the one
// this CPU runs. Both give bit-identical results: no fused multiply-add, the
// same operation order, exact division.
#pragma once

#include <cstdint>

namespace opverify::kernel {

// Everything the kernel needs about one output, fixed for all its elements.
struct FloatRules {
  double eco_atol, eco_rtol, eco_limit;
  double ulp32_subnormal;             // 32 * the smallest subnormal of the golden's format
  std::int64_t ulp32_exponent_shift;  // (p - 5) << 52: 32 ULP(x) = x's binade lowered by p - 5
  double svt, sve, rel, cap_atol, cap_rtol;
  double mm_threshold;
};

struct RunStats {
  std::int64_t eco_matched = 0;
  std::int64_t eco_over = 0;
  std::int64_t npu_small = 0;
  std::int64_t npu_matched = 0;
  std::int64_t cap_violations = 0;
  double npu_rel_sum = 0;  // sum of d / (|G| + 1e-7)
  double mm_rel_sum = 0;   // sum of d / max(|G|, T)
  double mm_rel_max = 0;
  double max_abs = 0;
  double max_rel = 0;      // max of d / (|G| + 1e-7)
  bool all_finite = true;  // false: a pair was not finite; the stats are meaningless
  // 16-bit storage: four-pair groups the float32 screen could not settle and
  // the float64 formulas judged (see judge_kernel.cc); the tests read it.
  std::int64_t float64_groups = 0;
};

// How the elements are stored.
enum class Storage { kFloat64, kFloat32, kFloat16, kBFloat16, kCount };

// Runs the rules over n pairs (n a multiple of 4) read from `golden` and
// `actual` in `storage`. Stops caring once a non-finite pair is seen and
// reports all_finite = false, so the caller can classify that run itself.
using RunFn = RunStats (*)(const void* golden, const void* actual, std::int64_t n,
                           const FloatRules& rules);

struct KernelSet {
  RunFn run[static_cast<int>(Storage::kCount)];
  const char* name;
};

// The fastest set this CPU supports.
const KernelSet& Kernels();

// Zero pairs padding a run to a multiple of 4 each count as eco-matched,
// npu-small and npu-matched, and add nothing else: subtract them.
inline void RemovePadding(RunStats* stats, std::int64_t padding) {
  stats->eco_matched -= padding;
  stats->npu_small -= padding;
  stats->npu_matched -= padding;
}

}  // namespace opverify::kernel
