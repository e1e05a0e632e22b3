// Judge(): pre-checks, the route, complex outputs split into parts and
// combined again, the worst elements and the message (PRECISION.md).
#include "runner/judge/judge.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "runner/common/failure_type.h"
#include "runner/judge/judge_part.h"
#include "runner/judge/verdict_message.h"

namespace opverify {
namespace {

using judge_internal::Better;
using judge_internal::Candidate;
using judge_internal::MereMareRel;
using judge_internal::PartJob;
using judge_internal::PartResult;

// Complex outputs: both parts combined. Counts add; a ratio takes the smaller
// part, a mean or maximum the larger, and a check passes when both parts do,
// so each combined check passes exactly when it passes on both parts.
OutputMetrics CombineParts(const OutputMetrics& re, const OutputMetrics& im) {
  OutputMetrics m = re;
  m.total += im.total;
  m.total_finite += im.total_finite;
  m.nan_count += im.nan_count;
  m.inf_count += im.inf_count;
  m.nan_mismatch_count += im.nan_mismatch_count;
  m.inf_mismatch_count += im.inf_mismatch_count;
  m.max_abs_diff = std::max(re.max_abs_diff, im.max_abs_diff);
  m.max_rel_diff = std::max(re.max_rel_diff, im.max_rel_diff);
  if (re.eco && im.eco) {
    m.eco->matched_count += im.eco->matched_count;
    m.eco->matched_ratio = std::min(re.eco->matched_ratio, im.eco->matched_ratio);
    m.eco->over_count += im.eco->over_count;
    m.eco->passed = re.eco->passed && im.eco->passed;
  }
  auto& npu = m.npu_benchmark;
  const auto& inpu = im.npu_benchmark;
  npu.matched_count += inpu.matched_count;
  npu.matched_ratio = std::min(npu.matched_ratio, inpu.matched_ratio);
  npu.mere = std::max(npu.mere, inpu.mere);
  npu.max_error_cap_violation_count += inpu.max_error_cap_violation_count;
  npu.small_count += inpu.small_count;
  npu.normal_count += inpu.normal_count;
  npu.max_error_cap_passed = npu.max_error_cap_passed && inpu.max_error_cap_passed;
  npu.matched_ratio_passed = npu.matched_ratio_passed && inpu.matched_ratio_passed;
  npu.mere_passed = npu.mere_passed && inpu.mere_passed;
  npu.passed = npu.passed && inpu.passed;
  m.mere_mare.mere = std::max(re.mere_mare.mere, im.mere_mare.mere);
  m.mere_mare.mare = std::max(re.mere_mare.mare, im.mere_mare.mare);
  m.mere_mare.passed = re.mere_mare.passed && im.mere_mare.passed;
  if (re.discrete && im.discrete) {
    m.discrete->violation_count += im.discrete->violation_count;
    m.discrete->passed = re.discrete->passed && im.discrete->passed;
  }
  return m;
}

// A view of one part of a complex tensor (0 real, 1 imaginary).
TensorView ComplexPartView(const TensorView& view, int part) {
  TensorView out = view;
  out.dtype = ComplexPart(view.dtype);
  out.data = view.data + part * static_cast<std::int64_t>(DTypeSize(out.dtype));
  return out;
}

// Reads as zero everywhere: the imaginary part of a real tensor.
TensorView ZeroView(const TensorView& like) {
  static const std::byte kZeros[16] = {};
  TensorView out = like;
  out.strides.assign(like.shape.size(), 0);
  out.data = kZeros;
  return out;
}

WorstElement ToWorst(const Candidate& c, double threshold, const std::string& part) {
  WorstElement w;
  w.index = c.index;
  w.golden = c.golden;
  w.actual = c.actual;
  w.abs_diff = std::fabs(c.actual - c.golden);
  w.rel_diff = MereMareRel(c.golden, c.actual, threshold);
  w.part = part;
  return w;
}

// The verdict's facts before any element is read: dtypes, shapes, the route.
Verdict StartVerdict(const TensorView& golden, const TensorView& actual,
                     const JudgeOptions& options) {
  Verdict v;
  v.options = options;
  v.dtype = golden.dtype;
  v.actual_dtype = actual.dtype;
  v.shape = golden.shape;
  v.actual_shape = actual.shape;
  v.route = SelectRoute(golden.dtype, options.standard, options.input_type, options.non_compute);
  if (golden.dtype != actual.dtype) v.warnings.emplace_back("dtype_mismatch");
  return v;
}

// One real-valued pair to judge: a whole tensor, or a complex tensor's part.
struct Part {
  std::string name;  // "real", "imag", or "" for a real tensor
  TensorView golden, actual;
};

// Complex tensors split into two real parts; a real side pairs with them as
// torch casts it (complex -> real keeps the real part, real -> complex adds 0i).
std::vector<Part> SplitParts(const TensorView& golden, const TensorView& actual) {
  std::vector<Part> parts;
  if (IsComplex(golden.dtype)) {
    const bool actual_complex = IsComplex(actual.dtype);
    parts.push_back(
        {"real", ComplexPartView(golden, 0), actual_complex ? ComplexPartView(actual, 0) : actual});
    parts.push_back({"imag", ComplexPartView(golden, 1),
                     actual_complex ? ComplexPartView(actual, 1) : ZeroView(actual)});
  } else {
    parts.push_back({"", golden, IsComplex(actual.dtype) ? ComplexPartView(actual, 0) : actual});
  }
  return parts;
}

// Every part judged on `route` under the rules of the output's dtype.
std::vector<PartResult> JudgeParts(const std::vector<Part>& parts, DType output_dtype, Route route,
                                   const JudgeOptions& options) {
  std::vector<PartResult> results;
  for (const Part& part : parts) {
    PartJob job{};
    job.golden = &part.golden;
    job.actual = &part.actual;
    job.as = part.golden.dtype;
    job.route = route;
    job.bitwise = route == Route::kBitwise;
    job.k = static_cast<std::size_t>(std::max(options.worst_count, 0));
    if (IsFloat(job.as))
      job.rules = judge_internal::MakeRules(output_dtype, job.as, options.precision_mode);
    results.push_back(judge_internal::JudgePart(job, options.threads));
  }
  return results;
}

// Picks the elements that explain a verdict from every part's candidates.
struct WorstPicker {
  const std::vector<PartResult>& results;
  const std::vector<Part>& parts;
  int worst_count;
  double mm_threshold;

  // The first worst_count of one kind of candidate over all parts, by score
  // (worst first) or by index.
  std::vector<WorstElement> Pick(std::vector<Candidate> PartResult::*member, bool by_score) const {
    std::vector<std::pair<Candidate, std::string>> all;
    for (std::size_t p = 0; p < results.size(); ++p) {
      for (const auto& c : results[p].*member) all.emplace_back(c, parts[p].name);
    }
    std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
      return by_score ? Better(a.first, b.first) : a.first.index < b.first.index;
    });
    if (all.size() > static_cast<std::size_t>(std::max(worst_count, 0))) {
      all.resize(static_cast<std::size_t>(std::max(worst_count, 0)));
    }
    std::vector<WorstElement> worst;
    for (const auto& [c, name] : all) worst.push_back(ToWorst(c, mm_threshold, name));
    return worst;
  }
};

// The error, its message and the worst elements of a judged verdict: NaN
// positions first, then Inf positions, then the route's own check.
void Explain(const WorstPicker& picker, Verdict* v) {
  const OutputMetrics& m = v->metrics;
  if (m.is_float && m.nan_mismatch_count > 0) {
    v->error_type = ErrorType::kNaNMismatch;
    v->worst = picker.Pick(&PartResult::mask_mismatches, false);
    v->error_msg = "NaN positions differ at " + std::to_string(m.nan_mismatch_count) + " of " +
                   std::to_string(m.total) + " elements" + judge_internal::FirstAt(v->worst);
  } else if (m.is_float && m.inf_mismatch_count > 0) {
    v->error_type = ErrorType::kInfMismatch;
    v->worst = picker.Pick(&PartResult::mask_mismatches, false);
    v->error_msg = "Inf positions or signs differ at " + std::to_string(m.inf_mismatch_count) +
                   " of " + std::to_string(m.total) + " elements" +
                   judge_internal::FirstAt(v->worst);
  } else {
    // Bitwise failures may have d == 0 (NaN payloads, signed zeros): list them
    // in index order. Every other route lists its largest errors.
    const bool bitwise = v->route == Route::kBitwise;
    v->worst = picker.Pick(bitwise ? &PartResult::bit_mismatches : &PartResult::worst, !bitwise);
    if (!judge_internal::RoutePassed(v->route, m)) {
      v->error_type = ErrorType::kAccuracyError;
      v->error_msg = std::string(RouteName(v->route)) +
                     " failed: " + judge_internal::AccuracyMessage(v->route, m);
    }
  }
}

}  // namespace

std::string_view ErrorTypeName(ErrorType error_type) {
  switch (error_type) {
    case ErrorType::kNone:
      return "";
    case ErrorType::kAccuracyError:
      return FailureKindName(FailureKind::kAccuracyError);
    case ErrorType::kShapeMismatch:
      return FailureKindName(FailureKind::kShapeMismatch);
    case ErrorType::kNaNMismatch:
      return FailureKindName(FailureKind::kNaNMismatch);
    case ErrorType::kInfMismatch:
      return FailureKindName(FailureKind::kInfMismatch);
  }
  return "";
}

Verdict Judge(const TensorView& golden, const TensorView& actual, const JudgeOptions& options) {
  Verdict v = StartVerdict(golden, actual, options);
  if (golden.shape != actual.shape) {
    v.error_type = ErrorType::kShapeMismatch;
    v.error_msg = "shape mismatch: golden " + ShapeToString(golden.shape) + " vs actual " +
                  ShapeToString(actual.shape);
    v.metrics.total = golden.NumElements();
    return v;
  }
  const std::vector<Part> parts = SplitParts(golden, actual);
  const std::vector<PartResult> results = JudgeParts(parts, golden.dtype, v.route, options);
  if (results.size() == 2) {
    v.metrics = CombineParts(results[0].metrics, results[1].metrics);
    v.parts.emplace_back("real", results[0].metrics);
    v.parts.emplace_back("imag", results[1].metrics);
  } else {
    v.metrics = results[0].metrics;
  }
  const WorstPicker worst{results, parts, options.worst_count,
                          MereMareThresholdFor(golden.dtype, options.precision_mode)};
  Explain(worst, &v);
  v.passed = v.error_type == ErrorType::kNone;
  return v;
}

}  // namespace opverify
