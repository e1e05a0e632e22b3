// The discrete route of one part: integer and bool outputs (and the bitwise
// route's integers), every |actual - golden| exact in 128 bits; at most 1 on
// the quant route, 0 otherwise. A float actual with no value in the golden's
// integer dtype (NaN, Inf, out of range) is a violation, reported as it is.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "runner/judge/element_reader.h"
#include "runner/judge/judge_part.h"
#include "runner/judge/part_accumulator.h"

namespace opverify::judge_internal {

void JudgeIntegerBlocks(const PartJob& job, std::int64_t first_block, std::int64_t end_block,
                        PartAccumulator* acc) {
  const std::int64_t total = job.golden->NumElements();
  ElementReader g_reader(*job.golden), a_reader(*job.actual);
  std::array<Int128, kBlock> g{}, a{};
  const Int128 allowed = job.route == Route::kQuant ? 1 : 0;
  for (std::int64_t b = first_block; b < end_block; ++b) {
    const std::int64_t start = b * kBlock;
    const std::int64_t n = std::min(kBlock, total - start);
    g_reader.ReadInts(start, n, job.as, g.data());
    a_reader.ReadInts(start, n, job.as, a.data());
    acc->finite += n;
    for (std::int64_t i = 0; i < n; ++i) {
      const bool unrepresentable = a[i] == kUnrepresentable || g[i] == kUnrepresentable;
      const Int128 diff = a[i] > g[i] ? a[i] - g[i] : g[i] - a[i];
      if (diff == 0 && !unrepresentable) continue;
      auto gv = static_cast<double>(g[i]);
      auto av = static_cast<double>(a[i]);
      auto d = static_cast<double>(diff);
      // A float with no integer value (NaN, Inf, out of range): report it as it is.
      if (unrepresentable) {
        if (g[i] == kUnrepresentable) g_reader.ReadDoubles(start + i, 1, job.golden->dtype, &gv);
        if (a[i] == kUnrepresentable) a_reader.ReadDoubles(start + i, 1, job.actual->dtype, &av);
        d = std::numeric_limits<double>::infinity();
      }
      acc->max_abs = std::max(acc->max_abs, d);
      acc->max_rel = std::max(acc->max_rel, d / (std::fabs(gv) + kNpuRelativeEpsilon));
      if (unrepresentable || diff > allowed) ++acc->discrete_violations;
      ++acc->bit_mismatch;
      RecordFirst(&acc->first_bit_mismatches, job.k, start + i, gv, av);
      if (d > acc->worst.Threshold()) acc->worst.Offer({d, start + i, gv, av});
    }
  }
}

}  // namespace opverify::judge_internal
