// One real-valued golden/actual pair judged block by block: a whole tensor,
// or one part of a complex tensor (judge.cc splits those). Internal to the
// judge; judge.h is the public interface.
//
// JudgePart shares the part's blocks between threads, runs the float route
// (float_route.cc) or the integer/bool/quant route (discrete_route.cc) over
// each share, and merges the shares in block order, so the metrics are the
// same bits for any thread count.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runner/judge/element_reader.h"
#include "runner/judge/judge.h"
#include "runner/judge/judge_kernel.h"
#include "runner/judge/standards.h"
#include "runner/tensor/tensor_view.h"

namespace opverify::judge_internal {

// Elements per block: the unit of reading, of the kernel and of threading.
constexpr std::int64_t kBlock = ElementReader::kMaxRun;

// The kernel rules of one output: thresholds from the output's dtype (complex
// included), ULP from the format of the values judged (a complex part's).
struct OutputRules {
  bool has_eco = false;
  EcoThresholds eco{};
  NpuThresholds npu{};
  kernel::FloatRules kernel{};
};

// The rules of an output of dtype `output_dtype` whose values are judged
// in `part_dtype` (the same, or a complex output's part dtype).
OutputRules MakeRules(DType output_dtype, DType part_dtype, PrecisionMode mode);

// d / max(|G|, T): the mere_mare relative error, also the worst-element score.
inline double MereMareRel(double golden, double actual, double threshold) {
  const double magnitude = std::fabs(golden);
  return std::fabs(actual - golden) / (magnitude > threshold ? magnitude : threshold);
}

// An element worth reporting, with the score that ranks it (worst first).
struct Candidate {
  double score = 0;
  std::int64_t index = 0;
  double golden = 0;
  double actual = 0;
};

// Better: larger score, then smaller index.
inline bool Better(const Candidate& a, const Candidate& b) {
  return a.score != b.score ? a.score > b.score : a.index < b.index;
}

// One real-valued golden/actual pair to judge (a whole tensor or a complex part).
struct PartJob {
  const TensorView* golden;
  const TensorView* actual;
  DType as;  // the golden's dtype: the actual is cast to it
  Route route;
  bool bitwise;
  OutputRules rules;
  std::size_t k;
  std::vector<std::array<double, 2>>* block_sums;  // [block] = {npu rel sum, mm rel sum}
};

// What judging one part gives: its metrics and the elements that explain them.
struct PartResult {
  OutputMetrics metrics;
  std::vector<Candidate> worst;            // best first
  std::vector<Candidate> mask_mismatches;  // index order
  std::vector<Candidate> bit_mismatches;   // index order
};

// Judges every element of `job`'s part on `requested_threads` threads (0: as
// many as the machine has, for large parts). Never throws for data it can read.
PartResult JudgePart(PartJob job, int requested_threads);

}  // namespace opverify::judge_internal
