// A reference that cannot tell a right kernel from a wrong one: its output
// is all near zero, one repeated value, or the same whatever the inputs.
// Each is a warning on the case (the verdict is the judge's), computed over
// the whole output, never a sample: a sparse output that is 99.6% zeros but
// moves with its inputs is a normal reference.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/tensor/tensor_view.h"

namespace opverify {

// "degenerate reference: ..." when every finite element of a floating
// output is within 1e-6 of zero, or every finite element is one value;
// nullopt otherwise (and for non-floating outputs, fewer than 2 elements,
// or all NaN/Inf). Both scans read the whole output, stopping at the first
// element that shows otherwise.
std::optional<std::string> DegenerateReference(const TensorView& golden);

// Whether the reference's outputs move with its inputs: the first run of
// each seed adds a digest of every golden output (SHA-256 of all its bytes,
// with its dtype and shape); an output whose digest is the same for seeds
// whose inputs differ does not depend on them.
class SeedComparison {
 public:
  void Add(std::uint64_t seed, const std::string& input_digest,
           const std::vector<std::pair<TensorView, TensorView>>& tensors);
  // One warning per input-blind output; none with fewer than two seeds,
  // a missing input digest, or inputs that are the same for every seed.
  std::vector<std::string> Warnings() const;

 private:
  struct Seen {
    std::uint64_t seed;
    std::string input_digest;
    std::vector<std::string> digests;    // per output
    std::vector<std::int64_t> elements;  // per output
  };
  std::vector<Seen> seen_;
};

}  // namespace opverify
