// Comparing a run with an earlier one (a nightly with last night's, a
// release candidate with the release): which operators newly fail, which
// were fixed, which got slower or faster. A speed change counts only when
// it exceeds both the threshold and the spread the two runs measured.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/status.h"

namespace opverify {

struct SpeedChange {
  std::string op;
  double ratio = 1;   // implementation latency now / before: the geometric mean over the shapes both measured
  double spread = 0;  // the measurements' own relative spread (see baseline_diff.cc)
  int shapes = 0;
};

struct BaselineDiff {
  std::vector<std::string> newly_failing, fixed, added, missing;
  // Operators whose every failure is now reference_suspect (the A/B's class:
  // the implementation passes a float64 golden), which did not fail so in
  // the baseline: listed, never a regression (a real failure beside them is).
  std::vector<std::string> reference_suspect;
  std::vector<SpeedChange> slower, faster;
  // Whether an operator of the baseline that this run lacks is allowed
  // (--allow-missing); by default a missing operator is a regression: a
  // gate must not pass a run whose results for it are gone.
  bool allow_missing = false;
  bool regressed() const {
    return !newly_failing.empty() || !slower.empty() || (!allow_missing && !missing.empty());
  }
  nlohmann::ordered_json ToJson() const;
};

// Reads both run folders' summary.json and ops/<op>/perf_result.json.
// threshold: a relative change (0.05 for 5%).
Result<BaselineDiff> DiffRuns(const std::string& run_dir, const std::string& baseline_dir, double threshold);

}  // namespace opverify
