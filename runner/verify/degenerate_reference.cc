#include "runner/verify/degenerate_reference.h"

#include <algorithm>
#include <cmath>

#include "runner/common/sha256.h"
#include "runner/judge/element_reader.h"

namespace opverify {

std::optional<std::string> DegenerateReference(const TensorView& golden) {
  if (!IsFloat(golden.dtype) || golden.NumElements() < 2) return std::nullopt;
  constexpr double kNearZero = 1e-6;
  ElementReader reader(golden);
  std::vector<double> run(ElementReader::kMaxRun);
  bool near_zero = true, constant = true, have_first = false;
  double first = 0;
  const std::int64_t n = golden.NumElements();
  for (std::int64_t start = 0; start < n && (near_zero || constant);
       start += ElementReader::kMaxRun) {
    const std::int64_t count = std::min<std::int64_t>(ElementReader::kMaxRun, n - start);
    reader.ReadDoubles(start, count, DType::kFloat64, run.data());
    for (std::int64_t i = 0; i < count; ++i) {
      const double v = run[static_cast<std::size_t>(i)];
      if (!std::isfinite(v)) continue;
      if (std::fabs(v) > kNearZero) near_zero = false;
      if (!have_first) {
        first = v;
        have_first = true;
      } else if (v != first) {
        constant = false;
      }
    }
  }
  if (!have_first) return std::nullopt;  // all NaN/Inf: the judge's NaN and Inf checks speak
  if (near_zero) {
    return "degenerate reference: every finite element of the reference's output is within 1e-6 of "
           "zero, so "
           "almost any implementation matches it; give the operator inputs that make it produce "
           "real values";
  }
  if (constant) {
    return "degenerate reference: the reference's output is one value (" + std::to_string(first) +
           ") repeated, so it cannot tell a right kernel from a wrong one";
  }
  return std::nullopt;
}

void SeedComparison::Add(std::uint64_t seed, const std::string& input_digest,
                         const std::vector<std::pair<TensorView, TensorView>>& tensors) {
  Seen seen{seed, input_digest, {}, {}};
  for (const auto& pair : tensors) {
    const TensorView& golden = pair.first;
    const auto bytes = static_cast<std::size_t>(golden.NumElements()) * DTypeSize(golden.dtype);
    // dtype and shape too: the same bytes read as another tensor are another output.
    seen.digests.push_back(std::string(DTypeName(golden.dtype)) + ShapeToString(golden.shape) +
                           ":" + Sha256Hex(golden.data, bytes));
    seen.elements.push_back(golden.NumElements());
  }
  seen_.push_back(std::move(seen));
}

std::vector<std::string> SeedComparison::Warnings() const {
  std::vector<std::string> out;
  if (seen_.size() < 2) return out;
  for (const Seen& s : seen_) {
    if (s.input_digest.empty() || s.digests.size() != seen_.front().digests.size()) return out;
  }
  bool inputs_differ = false;
  for (const Seen& s : seen_) inputs_differ |= s.input_digest != seen_.front().input_digest;
  if (!inputs_differ) return out;
  std::string seeds;
  for (const Seen& s : seen_) seeds += (seeds.empty() ? "" : ", ") + std::to_string(s.seed);
  for (std::size_t k = 0; k < seen_.front().digests.size(); ++k) {
    // One element (a scalar loss, a count) may well not move; a whole tensor that does not is
    // blind.
    if (seen_.front().elements[k] < 2) continue;
    const bool same = std::all_of(seen_.begin(), seen_.end(), [&](const Seen& s) {
      return s.digests[k] == seen_.front().digests[k];
    });
    if (same) {
      out.push_back("output " + std::to_string(k) +
                    ": degenerate reference: its output is bit for bit the same " + "(all " +
                    std::to_string(seen_.front().elements[k]) + " elements) for seeds " + seeds +
                    " though the inputs differ, so it does not depend on them and cannot tell a "
                    "right kernel from "
                    "a wrong one");
    }
  }
  return out;
}

}  // namespace opverify
