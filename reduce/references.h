// Performance references (opverify-reduce --references FILE): per device
// name, an operator or one of its shapes -> a reference latency with lower
// and upper bounds, as ReFrame's references are; a measured latency outside
// its bounds is a PerformanceError. The nightly history is reduce/history.h.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reduce/run_model.h"
#include "runner/common/status.h"

namespace opverify {

// One reference checked against the run.
struct ReferenceResult {
  std::string device;  // the key of the references file that applied ("*": any device)
  std::string op;
  std::string
      target;  // the operator's name (its geometric-mean latency) or a case id (that shape's)
  double reference_ms = 0;
  std::optional<double> lower, upper;  // relative bounds: -0.1 is 10% below the reference
  std::optional<double> measured_ms;   // unset: not measured in this run
  bool violated = false;
  std::string message;  // "PerformanceError: ..." when violated
};

struct ReferenceCheck {
  std::vector<ReferenceResult> results;
  int violations = 0;
  int unmeasured = 0;
  nlohmann::ordered_json ToJson() const;
};

// Parses and checks a references file's content:
//   {"<device name>" | "*": {"<operator>" | "<case id>":
//       {"latency_ms": R, "lower": -0.1, "upper": 0.05}}}
// An operator's key is checked against the geometric mean of its shapes'
// implementation latencies, a case id's against that shape's. A missing
// bound is unbounded. An error names the key whose entry is malformed.
Result<ReferenceCheck> CheckReferences(const RunModel& run, const nlohmann::json& references);

// The geometric mean of the operator's benchmarked shapes' implementation
// latencies (ms); unset when none was measured.
std::optional<double> GeomeanLatency(const OperatorModel& op);

// The device an operator was benchmarked on, by name ("" when unknown).
std::string BenchDevice(const OperatorModel& op);

}  // namespace opverify
