// Comparing a run with an earlier one (a nightly with last night's, a
// release candidate with the release): which operators newly fail, which
// were fixed, which got slower or faster. A speed change counts only when
// it exceeds both the threshold and its noise floor: the spread the two
// runs measured, widened by Student's t for the repeats they took (three
// repeats' spread says little, so their floor is wide).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/status.h"

namespace opverify {

struct SpeedChange {
  std::string op;
  double ratio = 1;   // implementation latency now / before: the geometric mean over the shapes both measured
  double spread = 0;  // the measurements' own relative spread (see baseline_diff.cc)
  int shapes = 0;
  int repeats = 0;         // the fewest repeats of a compared shape, in either run
  double noise_floor = 0;  // the relative change the spread and repeats explain
};

// One shape's implementation timing in one run: the median of its repeats,
// their standard deviation and how many there were.
struct ShapeTiming {
  double median_ms = 0;
  double stdev_ms = 0;
  int repeats = 0;
};

// Student's t two-sided 99% quantile for `dof` degrees of freedom (>= 1).
double StudentT99(int dof);

// The speed change over the shapes both runs measured (pairs: baseline,
// now; each with repeats >= 2, so that it has a spread): the geometric mean
// of the latency ratios, the mean over the shapes of both runs' relative
// standard deviations added in quadrature, and the noise floor: that
// spread times StudentT99 of the fewest degrees of freedom of a shape
// (repeats - 1 in each run). Unset without a pair.
std::optional<SpeedChange> CompareTimings(
    const std::string& op, const std::vector<std::pair<ShapeTiming, ShapeTiming>>& pairs);

// Whether `change` counts as slower or faster: its size (on a log scale)
// beyond both 1 + threshold and 1 + its noise floor.
bool BeyondNoise(const SpeedChange& change, double threshold);

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
