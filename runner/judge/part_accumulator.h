// What one thread learns while judging its share of a part's blocks, and the
// two routes that fill it. Internal to the judge (judge_part.cc merges the
// shares in block order).
//
// Each route judges blocks [first_block, end_block) of `job` into `acc`:
//   JudgeFloatBlocks (float_route.cc): NaN/Inf masks, every float standard's
//     counts and sums through the kernel, the worst elements, and the raw bits
//     on the bitwise route;
//   JudgeIntegerBlocks (discrete_route.cc): integer and bool outputs, exact
//     or within 1 (quant), a float with no integer value a violation.
// The float route also records block b's sums in (*job.block_sums)[b].
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runner/judge/judge_kernel.h"
#include "runner/judge/judge_part.h"

namespace opverify::judge_internal {

// The k best candidates seen, kept as a heap whose top is the least good.
class WorstKeeper {
 public:
  explicit WorstKeeper(int k) : k_(static_cast<std::size_t>(std::max(k, 0))) {}
  // A score must exceed this to be kept (elements arrive in index order).
  double Threshold() const { return heap_.size() < k_ ? 0.0 : heap_.front().score; }
  void Offer(const Candidate& c) {
    if (k_ == 0 || c.score <= 0) return;
    if (heap_.size() < k_) {
      heap_.push_back(c);
      std::push_heap(heap_.begin(), heap_.end(), Better);
    } else if (Better(c, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), Better);
      heap_.back() = c;
      std::push_heap(heap_.begin(), heap_.end(), Better);
    }
  }
  const std::vector<Candidate>& items() const { return heap_; }

 private:
  std::size_t k_;
  std::vector<Candidate> heap_;
};

// Keeps the first k mismatches offered (elements arrive in index order).
inline void RecordFirst(std::vector<Candidate>* list, std::size_t k, std::int64_t index,
                        double golden, double actual) {
  if (list->size() < k) list->push_back({1.0, index, golden, actual});
}

// What one thread learns about its share of one real-valued part.
struct PartAccumulator {
  explicit PartAccumulator(int k) : worst(k) {}
  std::int64_t finite = 0, nan_count = 0, inf_count = 0;
  std::int64_t nan_mismatch = 0, inf_mismatch = 0, bit_mismatch = 0, discrete_violations = 0;
  std::int64_t eco_matched = 0, eco_over = 0, npu_small = 0, npu_matched = 0, cap = 0;
  double mm_max = 0, max_abs = 0, max_rel = 0;
  WorstKeeper worst;
  std::vector<Candidate> first_mask_mismatches;
  std::vector<Candidate> first_bit_mismatches;

  void Add(const kernel::RunStats& s, std::int64_t finite_in_run) {
    finite += finite_in_run;
    eco_matched += s.eco_matched;
    eco_over += s.eco_over;
    npu_small += s.npu_small;
    npu_matched += s.npu_matched;
    cap += s.cap_violations;
    mm_max = std::max(mm_max, s.mm_rel_max);
    max_abs = std::max(max_abs, s.max_abs);
    max_rel = std::max(max_rel, s.max_rel);
  }
};

void JudgeFloatBlocks(const PartJob& job, std::int64_t first_block, std::int64_t end_block,
                      PartAccumulator* acc);
void JudgeIntegerBlocks(const PartJob& job, std::int64_t first_block, std::int64_t end_block,
                        PartAccumulator* acc);

}  // namespace opverify::judge_internal
