#include "reduce/performance_gates.h"

#include "runner/common/failure_type.h"
#include "runner/common/strings.h"

namespace opverify {
namespace {

std::string SpeedMessage(const SpeedChange& c, const char* what) {
  return Printf(
      "%s: %s %+.1f%% against the baseline (geometric mean over %d shapes; noise floor %.1f%%: "
      "spread %.1f%% at %d repeats)",
      what, c.op.c_str(), (c.ratio - 1) * 100, c.shapes, c.noise_floor * 100, c.spread * 100,
      c.repeats);
}

}  // namespace

std::vector<PerformanceGate> PerformanceGates(const ReportExtras& extras) {
  std::vector<PerformanceGate> gates;
  if (extras.references) {
    for (const ReferenceResult& r : extras.references->results) {
      PerformanceGate gate{
          r.op, "reference " + r.target,
          r.violated ? std::string(FailureKindName(FailureKind::kPerformanceError)) : "",
          r.measured_ms.has_value(), r.message};
      if (!r.violated)
        gate.message = r.measured_ms ? Printf("%.4g ms against the reference %.4g ms",
                                              *r.measured_ms, r.reference_ms)
                                     : "not measured in this run";
      gates.push_back(std::move(gate));
    }
  }
  if (extras.baseline) {
    for (const SpeedChange& c : extras.baseline->slower)
      gates.push_back({c.op, "baseline", "PerformanceRegression", true,
                       SpeedMessage(c, "PerformanceRegression")});
    for (const SpeedChange& c : extras.baseline->faster)
      gates.push_back({c.op, "baseline", "", true, SpeedMessage(c, "faster")});
  }
  return gates;
}

nlohmann::ordered_json PerformanceGatesJson(const ReportExtras& extras) {
  nlohmann::ordered_json out;
  nlohmann::ordered_json regressions = nlohmann::ordered_json::array();
  nlohmann::ordered_json violations = nlohmann::ordered_json::array();
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  int failed = 0;
  for (const PerformanceGate& g : PerformanceGates(extras)) {
    nlohmann::ordered_json row = {{"op", g.op},
                                  {"gate", g.name},
                                  {"passed", g.type.empty()},
                                  {"measured", g.measured},
                                  {"message", g.message}};
    if (!g.type.empty()) {
      row["error_type"] = g.type;
      ++failed;
      (g.type == FailureKindName(FailureKind::kPerformanceError) ? violations : regressions)
          .push_back(row);
    }
    all.push_back(std::move(row));
  }
  out["failed"] = failed;
  out["reference_violations"] = std::move(violations);
  out["regressions"] = std::move(regressions);
  out["gates"] = std::move(all);
  return out;
}

}  // namespace opverify
