#include "runner/judge/judge_kernel.h"

#include <cstdlib>
#include <cstring>

namespace opverify::kernel {
namespace avx2 {
extern const KernelSet kKernelSet;
}
namespace baseline {
extern const KernelSet kKernelSet;
}

const KernelSet& Kernels() {
  static const KernelSet* const chosen = []() {
    // OPVERIFY_JUDGE_KERNEL=baseline forces the portable copy (its tests run both).
    const char* forced = std::getenv("OPVERIFY_JUDGE_KERNEL");
    if (forced != nullptr && std::strcmp(forced, "baseline") == 0) return &baseline::kKernelSet;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) return &avx2::kKernelSet;
    return &baseline::kKernelSet;
  }();
  return *chosen;
}

}  // namespace opverify::kernel
