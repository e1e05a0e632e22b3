#include "runner/judge/judge_kernel.h"

#include <cpuid.h>

#include <cstdlib>
#include <cstring>

namespace opverify::kernel {
namespace avx2 {
extern const KernelSet kKernelSet;
}
namespace baseline {
extern const KernelSet kKernelSet;
}

namespace {

// CPUID leaf 1's F16C bit: clang's __builtin_cpu_supports has no "f16c".
bool HasF16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
}

}  // namespace

const KernelSet& Kernels() {
  static const KernelSet* const chosen = []() {
    // OPVERIFY_JUDGE_KERNEL=baseline forces the portable copy (its tests run both).
    const char* forced = std::getenv("OPVERIFY_JUDGE_KERNEL");
    if (forced != nullptr && std::strcmp(forced, "baseline") == 0) return &baseline::kKernelSet;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && HasF16c()) return &avx2::kKernelSet;
    return &baseline::kKernelSet;
  }();
  return *chosen;
}

}  // namespace opverify::kernel
