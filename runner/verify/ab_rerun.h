// The automatic A/B of an accuracy failure (seed 000, "精度失败的归因禁令"):
// the case is re-run by itself in a new executor on a fresh private
// TRITON_CACHE_DIR, and once more in a new executor on the original cache,
// and the three runs' outputs are compared bit for bit.
//
//   real_defect       all three agree: fix the kernel
//   compiler_suspect  only the fresh cache disagrees: the fresh cache folder
//                     is kept, with both environment fingerprints
//   nondeterministic  the same cache disagrees with itself
//   reference_suspect all three agree, and the reference is the suspect: the
//                     failing output passes against a float64 golden (or,
//                     where none can be made, it matches torch's own device
//                     run of the reference, which fails the CPU golden too);
//                     runner/verify/reference_trust.h. The verdict stays failed.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runner/verify/operator_run.h"

namespace opverify {

struct AbRequest {
  const OperatorSpec* spec = nullptr;
  RunOptions options;               // as the original run (its env holds the original cache)
  std::string original_cache_dir;   // the original TRITON_CACHE_DIR (recorded)
  std::string fresh_cache_parent;   // where fresh cache folders are made
  nlohmann::json original_environment;
};

// The A/B record of case `original.index`:
// {"classification", "attempts": [{"label", "error_type", "passed",
//  "actual_sha256", "cache_dir"}...], "bitwise_equal": {"fresh", "same_cache"},
//  "reference_trust": {"suspect", "reason", "fp64", "device_reference"} (null
//  unless the runs agree), "kept_cache_dir", "environments": {"original", "fresh"}}.
// `original`'s tensors must still be valid: call it inside RunOperator's on_case.
nlohmann::json RunAb(const AbRequest& request, const CaseOutcome& original);

}  // namespace opverify
