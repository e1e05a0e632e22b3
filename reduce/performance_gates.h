// The performance verdicts CI reads (summary.json's "performance_gates",
// junit.xml's opverify.performance suite): each --references bound checked
// (a violated one is a PerformanceError, a failure) and, against
// --baseline, each operator slower beyond its noise floor (a
// PerformanceRegression, a failure) or faster (listed, passing).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reduce/report_extras.h"

namespace opverify {

struct PerformanceGate {
  std::string op;
  std::string name;      // "reference <target>", "baseline"
  std::string type;      // "PerformanceError", "PerformanceRegression"; "" when it passed
  bool measured = true;  // false: a reference of something this run did not measure
  std::string message;   // what was measured against what
};

// One gate per reference result, then one per operator slower or faster
// than the baseline; in that order.
std::vector<PerformanceGate> PerformanceGates(const ReportExtras& extras);

// {"failed": N, "regressions": [...], "reference_violations": [...], "gates": [...]}.
nlohmann::ordered_json PerformanceGatesJson(const ReportExtras& extras);

}  // namespace opverify
