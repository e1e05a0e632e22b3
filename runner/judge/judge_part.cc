// JudgePart: a part's blocks shared between threads, each share judged by its
// route, the shares merged in block order and turned into OutputMetrics.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "runner/judge/judge_part.h"
#include "runner/judge/part_accumulator.h"

namespace opverify::judge_internal {
namespace {

// Below this many elements one thread is faster than starting several.
constexpr std::int64_t kParallelThreshold = std::int64_t{1} << 20;

// Kahan-Babuska-Neumaier sum of the block sums, in block order: the result
// does not depend on how blocks were shared between threads.
std::array<double, 2> SumBlocks(const std::vector<std::array<double, 2>>& sums) {
  std::array<double, 2> total{}, compensation{};
  for (const auto& block : sums) {
    for (int k = 0; k < 2; ++k) {
      const double t = total[k] + block[k];
      compensation[k] += std::fabs(total[k]) >= std::fabs(block[k]) ? (total[k] - t) + block[k]
                                                                    : (block[k] - t) + total[k];
      total[k] = t;
    }
  }
  return {total[0] + compensation[0], total[1] + compensation[1]};
}

int ThreadCount(std::int64_t elements, std::int64_t blocks, int requested) {
  if (elements < kParallelThreshold && requested <= 0) return 1;
  int threads = requested > 0 ? requested : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(threads, 1);
  return static_cast<int>(std::min<std::int64_t>(threads, std::max<std::int64_t>(blocks, 1)));
}

// Each thread's share of the blocks judged by the part's route; share t
// holds blocks [blocks * t / threads, blocks * (t + 1) / threads).
std::vector<PartAccumulator> JudgeShares(const PartJob& job, std::int64_t blocks, int threads) {
  const bool is_float = IsFloat(job.as);
  std::vector<PartAccumulator> accs(static_cast<std::size_t>(threads),
                                    PartAccumulator(static_cast<int>(job.k)));
  auto work = [&](int t) {
    const std::int64_t begin = blocks * t / threads;
    const std::int64_t end = blocks * (t + 1) / threads;
    if (is_float) {
      JudgeFloatBlocks(job, begin, end, &accs[t]);
    } else {
      JudgeIntegerBlocks(job, begin, end, &accs[t]);
    }
  };
  if (threads == 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
  }
  return accs;
}

// The shares merged in thread order, which is index order; the k worst
// candidates of all of them, best first, in `worst`.
PartAccumulator MergeShares(const std::vector<PartAccumulator>& accs, std::size_t k,
                            std::vector<Candidate>* worst) {
  PartAccumulator all(static_cast<int>(k));
  for (const auto& acc : accs) {
    all.finite += acc.finite;
    all.nan_count += acc.nan_count;
    all.inf_count += acc.inf_count;
    all.nan_mismatch += acc.nan_mismatch;
    all.inf_mismatch += acc.inf_mismatch;
    all.bit_mismatch += acc.bit_mismatch;
    all.discrete_violations += acc.discrete_violations;
    all.eco_matched += acc.eco_matched;
    all.eco_over += acc.eco_over;
    all.npu_small += acc.npu_small;
    all.npu_matched += acc.npu_matched;
    all.cap += acc.cap;
    all.mm_max = std::max(all.mm_max, acc.mm_max);
    all.max_abs = std::max(all.max_abs, acc.max_abs);
    all.max_rel = std::max(all.max_rel, acc.max_rel);
    worst->insert(worst->end(), acc.worst.items().begin(), acc.worst.items().end());
    for (const auto& c : acc.first_mask_mismatches)
      RecordFirst(&all.first_mask_mismatches, k, c.index, c.golden, c.actual);
    for (const auto& c : acc.first_bit_mismatches)
      RecordFirst(&all.first_bit_mismatches, k, c.index, c.golden, c.actual);
  }
  std::sort(worst->begin(), worst->end(), Better);
  if (worst->size() > k) worst->resize(k);
  return all;
}

// The float standards' metrics (eco, NPU Benchmark, MERE/MARE) of a part
// whose shares merged into `all`, its block sums in `block_sums`.
void FloatMetrics(const PartAccumulator& all, const std::vector<std::array<double, 2>>& block_sums,
                  const OutputRules& r, OutputMetrics* m) {
  const std::int64_t f = all.finite;
  const auto [npu_sum, mm_sum] = SumBlocks(block_sums);
  if (r.has_eco) {
    EcoMetrics eco;
    eco.thresholds = r.eco;
    eco.matched_count = all.eco_matched;
    eco.matched_ratio =
        f == 0 ? 1.0 : static_cast<double>(all.eco_matched) / static_cast<double>(f);
    eco.over_count = all.eco_over;
    // 99% in integers: matched / f >= 0.99 without a rounded quotient.
    eco.passed = all.eco_matched * 100 >= f * 99 && all.eco_over == 0;
    m->eco = eco;
  }
  NpuBenchmarkMetrics& npu = m->npu_benchmark;
  npu.thresholds = r.npu;
  npu.matched_count = all.npu_matched;
  npu.matched_ratio = f == 0 ? 1.0 : static_cast<double>(all.npu_matched) / static_cast<double>(f);
  npu.mere = f == 0 ? 0.0 : npu_sum / static_cast<double>(f);
  npu.max_error_cap_violation_count = all.cap;
  npu.small_count = all.npu_small;
  npu.normal_count = f - all.npu_small;
  npu.max_error_cap_passed = all.cap == 0;
  npu.matched_ratio_passed = all.npu_matched * 10 >= f * 9;
  npu.mere_passed = f == 0 || npu.mere < r.npu.rel_threshold;
  npu.passed = npu.max_error_cap_passed && npu.matched_ratio_passed && npu.mere_passed;
  MereMareMetrics& mm = m->mere_mare;
  const double t = r.kernel.mm_threshold;
  mm.threshold = t;
  mm.mere = f == 0 ? 0.0 : mm_sum / static_cast<double>(f);
  mm.mare = f == 0 ? 0.0 : all.mm_max;
  mm.passed = mm.mere < t && mm.mare < kMareFactor * t;
}

// The discrete check of the bitwise, exact and quant routes (none on the others).
std::optional<DiscreteMetrics> DiscreteCheck(const PartJob& job, const PartAccumulator& all) {
  if (job.route != Route::kBitwise && job.route != Route::kExact && job.route != Route::kQuant)
    return std::nullopt;
  DiscreteMetrics discrete;
  discrete.max_allowed_diff = job.route == Route::kQuant ? 1.0 : 0.0;
  discrete.category = job.route == Route::kBitwise ? "non_compute"
                      : job.route == Route::kQuant ? "quant_fp_to_int"
                      : job.as == DType::kBool     ? "bool_output"
                                                   : "integer_compute";
  discrete.violation_count =
      IsFloat(job.as) || job.route == Route::kBitwise ? all.bit_mismatch : all.discrete_violations;
  discrete.passed = discrete.violation_count == 0;
  return discrete;
}

}  // namespace

PartResult JudgePart(PartJob job, int requested_threads) {
  const std::int64_t total = job.golden->NumElements();
  const std::int64_t blocks = (total + kBlock - 1) / kBlock;
  const bool is_float = IsFloat(job.as);
  std::vector<std::array<double, 2>> block_sums(static_cast<std::size_t>(blocks));
  job.block_sums = &block_sums;
  const int threads = ThreadCount(total, blocks, requested_threads);
  const std::vector<PartAccumulator> accs = JudgeShares(job, blocks, threads);

  PartResult result;
  PartAccumulator all = MergeShares(accs, job.k, &result.worst);
  result.mask_mismatches = std::move(all.first_mask_mismatches);
  result.bit_mismatches = std::move(all.first_bit_mismatches);
  OutputMetrics& m = result.metrics;
  m.total = total;
  m.total_finite = all.finite;
  m.nan_count = all.nan_count;
  m.inf_count = all.inf_count;
  m.nan_mismatch_count = all.nan_mismatch;
  m.inf_mismatch_count = all.inf_mismatch;
  m.max_abs_diff = all.max_abs;
  m.max_rel_diff = all.max_rel;
  m.is_float = is_float;
  if (is_float) FloatMetrics(all, block_sums, job.rules, &m);
  m.discrete = DiscreteCheck(job, all);
  return result;
}

}  // namespace opverify::judge_internal
