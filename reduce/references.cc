#include "reduce/references.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "runner/common/failure_type.h"
#include "runner/common/strings.h"
#include "runner/results/perf_result.h"

namespace opverify {
namespace {

using nlohmann::json;

std::optional<double> Bound(const json& entry, const char* key, const std::string& where,
                            Status* error) {
  if (!entry.contains(key) || entry[key].is_null()) return std::nullopt;
  if (!entry[key].is_number()) {
    *error = Status::InvalidInput(where + ": \"" + key +
                                  "\" must be a number (a fraction: -0.1 is 10% below)");
    return std::nullopt;
  }
  return entry[key].get<double>();
}

std::string Percent(double fraction) { return Printf("%+.1f%%", fraction * 100); }

}  // namespace

std::optional<double> GeomeanLatency(const OperatorModel& op) {
  if (!op.performance) return std::nullopt;
  std::vector<double> latencies;
  for (const ShapeResult& shape : op.performance->result.shapes) {
    const auto& ms = shape.implementation.latency_ms;
    if (shape.passed && ms && std::isfinite(*ms) && *ms > 0) latencies.push_back(*ms);
  }
  return GeometricMean(latencies);
}

std::string BenchDevice(const OperatorModel& op) {
  if (!op.performance) return "";
  const json& env = op.performance->result.environment;
  if (env.is_object() && env.contains("device") && env["device"].is_object() &&
      env["device"].contains("name") && env["device"]["name"].is_string()) {
    return env["device"]["name"].get<std::string>();
  }
  return "";
}

namespace {

// The benchmarked shapes of `op`, by case id.
std::map<std::string, const ShapeResult*> ShapesByCaseId(const OperatorModel& op) {
  std::map<std::string, const ShapeResult*> shapes;
  if (!op.performance) return shapes;
  for (const ShapeResult& shape : op.performance->result.shapes) {
    for (const CaseRecord& c : op.cases) {
      if (c.case_index == shape.case_idx - 1) shapes[c.case_id] = &shape;
    }
  }
  return shapes;
}

// The entry `target` of the references under `key`, read: the reference
// latency and its bounds (nothing measured yet).
Result<ReferenceResult> ReadEntry(const char* key, const std::string& op, const std::string& target,
                                  const json& entry) {
  const std::string where = std::string("\"") + key + "\" / \"" + target + "\"";
  if (!entry.is_object() || !entry.contains("latency_ms") || !entry["latency_ms"].is_number() ||
      entry["latency_ms"].get<double>() <= 0) {
    return Status::InvalidInput(
        where + ": expected {\"latency_ms\": a positive number, \"lower\", \"upper\"}");
  }
  ReferenceResult r;
  r.device = key;
  r.op = op;
  r.target = target;
  r.reference_ms = entry["latency_ms"].get<double>();
  Status error = Status::Ok();
  r.lower = Bound(entry, "lower", where, &error);
  r.upper = Bound(entry, "upper", where, &error);
  if (!error.ok()) return error;
  return r;
}

// Marks `r` violated, saying why, when its measurement (of `what`) is
// outside its bounds.
void CompareWithBounds(const std::string& what, ReferenceResult* r) {
  const double m = *r->measured_ms;
  if (r->upper && m > r->reference_ms * (1 + *r->upper)) {
    r->violated = true;
    r->message =
        Printf("PerformanceError: %s: %.4g ms is above the reference %.4g ms %s (at most %.4g ms)",
               what.c_str(), m, r->reference_ms, Percent(*r->upper).c_str(),
               r->reference_ms * (1 + *r->upper));
  } else if (r->lower && m < r->reference_ms * (1 + *r->lower)) {
    r->violated = true;
    r->message = Printf(
        "PerformanceError: %s: %.4g ms is below the reference %.4g ms %s (at least %.4g ms): "
        "faster than expected, check the measurement or update the reference",
        what.c_str(), m, r->reference_ms, Percent(*r->lower).c_str(),
        r->reference_ms * (1 + *r->lower));
  }
}

// References of operators this run did not benchmark at all: unmeasured.
void AddUnchecked(const json& references, const std::set<std::string>& applied,
                  const std::set<std::pair<std::string, std::string>>& checked,
                  ReferenceCheck* check) {
  for (const std::string& key : applied) {
    for (const auto& [target, entry] : references[key].items()) {
      if (checked.count({key, target}) > 0) continue;
      ReferenceResult r;
      r.device = key;
      r.op = target.substr(0, target.find('/'));
      r.target = target;
      r.reference_ms = entry.is_object() ? entry.value("latency_ms", 0.0) : 0.0;
      ++check->unmeasured;
      check->results.push_back(std::move(r));
    }
  }
}

}  // namespace

Result<ReferenceCheck> CheckReferences(const RunModel& run, const json& references) {
  if (!references.is_object())
    return Status::InvalidInput("the references file must be a JSON object of device names");
  ReferenceCheck check;
  std::set<std::pair<std::string, std::string>> checked;  // (device key, target)
  std::set<std::string> applied;                          // the device keys that applied
  for (const OperatorModel& op : run.operators) {
    const std::string device = BenchDevice(op);
    // The operator's own device's references, else the ones for any device.
    const char* key = references.contains(device) ? device.c_str() : "*";
    if (!references.contains(key)) continue;
    const json& table = references[key];
    if (!table.is_object())
      return Status::InvalidInput(std::string("\"") + key + "\": must be an object");
    const std::map<std::string, const ShapeResult*> shapes = ShapesByCaseId(op);
    applied.insert(key);
    for (const auto& [target, entry] : table.items()) {
      const bool whole = target == op.name;
      if (!whole && target.rfind(op.name + "/", 0) != 0) continue;
      checked.insert({key, target});
      Result<ReferenceResult> read = ReadEntry(key, op.name, target, entry);
      if (!read.ok()) return read.status();
      ReferenceResult r = std::move(read).value();
      if (whole) {
        r.measured_ms = GeomeanLatency(op);
      } else if (const auto shape = shapes.find(target); shape != shapes.end()) {
        r.measured_ms =
            shape->second->passed ? shape->second->implementation.latency_ms : std::nullopt;
      }
      if (!r.measured_ms) {
        ++check.unmeasured;
      } else {
        CompareWithBounds(
            (whole ? op.name + " (geometric mean over its shapes)" : op.name + " shape " + target) +
                " on " + (device.empty() ? "an unnamed device" : device),
            &r);
      }
      check.violations += r.violated ? 1 : 0;
      check.results.push_back(std::move(r));
    }
  }
  AddUnchecked(references, applied, checked, &check);
  return check;
}

nlohmann::ordered_json ReferenceCheck::ToJson() const {
  nlohmann::ordered_json out;
  out["violations"] = violations;
  out["unmeasured"] = unmeasured;
  out["results"] = nlohmann::ordered_json::array();
  for (const ReferenceResult& r : results) {
    nlohmann::ordered_json row;
    row["device"] = r.device;
    row["op"] = r.op;
    row["target"] = r.target;
    row["reference_ms"] = r.reference_ms;
    row["lower"] = r.lower ? nlohmann::ordered_json(*r.lower) : nlohmann::ordered_json(nullptr);
    row["upper"] = r.upper ? nlohmann::ordered_json(*r.upper) : nlohmann::ordered_json(nullptr);
    row["measured_ms"] =
        r.measured_ms ? nlohmann::ordered_json(*r.measured_ms) : nlohmann::ordered_json(nullptr);
    row["passed"] = !r.violated;
    if (r.violated) row["error_type"] = FailureKindName(FailureKind::kPerformanceError);
    if (!r.message.empty()) row["message"] = r.message;
    out["results"].push_back(std::move(row));
  }
  return out;
}

}  // namespace opverify
