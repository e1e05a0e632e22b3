// The automatic A/B of an accuracy failure (seed 000, "精度失败的归因禁令"):
// the case is re-run by itself in a new executor on a fresh private
// TRITON_CACHE_DIR, and once more in a new executor on the original cache,
// and the three runs' outputs are compared bit for bit.
//
//   real_defect       all three agree: fix the kernel
//   compiler_suspect  only the fresh cache disagrees: the fresh cache folder
//                     is kept, with both environment fingerprints
//   nondeterministic  the same cache disagrees with itself
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
//  "kept_cache_dir", "environments": {"original", "fresh"}}.
nlohmann::json RunAb(const AbRequest& request, const CaseOutcome& original);

}  // namespace opverify
