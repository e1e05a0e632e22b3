// The words of a Verdict: whether the deciding route passed and, when it did
// not, why in one line. Internal to the judge; pure functions of the metrics.
#pragma once

#include <string>
#include <vector>

#include "runner/judge/judge.h"
#include "runner/judge/standards.h"

namespace opverify::judge_internal {

// Whether `route`'s checks pass on `m` (strict: the eco routing and mere_mare).
bool RoutePassed(Route route, const OutputMetrics& m);

// The failing checks of the deciding route, "; "-separated, with the numbers
// that failed them (e.g. "MERE 0.02 >= 0.001").
std::string AccuracyMessage(Route route, const OutputMetrics& m);

// " (first at index 7: golden 1, actual nan)", or nothing without an element.
std::string FirstAt(const std::vector<WorstElement>& worst);

}  // namespace opverify::judge_internal
