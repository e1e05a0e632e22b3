#include "runner/pymodule/load_run.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "reduce/references.h"
#include "reduce/run_model.h"
#include "reduce/skipped_cases.h"
#include "runner/common/json_text.h"
#include "runner/results/perf_result.h"
#include "runner/store/run_records.h"

namespace py = pybind11;
using nlohmann::json;

namespace opverify {
namespace {

// JSON to Python's own objects, through Python's json module (exact for
// every value nlohmann holds; invalid UTF-8 replaced).
py::object ToPython(const json& value) {
  const py::object loads = py::module_::import("json").attr("loads");  // cached by Python
  return loads(JsonText(value));
}

json ReadJsonFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  std::stringstream text;
  text << in.rdbuf();
  const json parsed = json::parse(text.str(), nullptr, false);
  return parsed.is_discarded() ? json(nullptr) : parsed;
}

double MetricOrNan(const CaseRecord& c, const char* key) {
  double worst = std::numeric_limits<double>::quiet_NaN();
  for (const json& output : c.outputs) {
    if (!output.is_object() || !output.contains("metrics") || !output["metrics"].contains(key))
      continue;
    const json& m = output["metrics"][key];
    if (m.is_number())
      worst = std::isnan(worst) ? m.get<double>() : std::max(worst, m.get<double>());
  }
  return worst;
}

py::dict CaseDict(const CaseRecord& c) {
  py::dict d;
  d["case_id"] = c.case_id;
  d["op"] = c.op_name;
  d["index"] = c.case_index;       // 0-based, as the store keeps it (op/#N has index N - 1)
  d["number"] = c.case_index + 1;  // as verify_result.json's case_idx and `opverify verify --case`
  d["passed"] = c.passed;          // waived cases passed too
  d["waived"] = c.waived;
  d["error_type"] =
      c.error_type.empty() ? py::object(py::none()) : py::object(py::str(c.error_type));
  d["error_msg"] = c.error_msg;
  d["params"] = ToPython(c.params);
  d["input_desc"] = ToPython(c.input_desc);
  d["route"] = c.route;
  d["verdicts"] = ToPython(c.outputs);  // per output: passed, route, metrics, worst, ...
  d["timings"] = ToPython(c.timings);
  d["rank"] = c.rank;
  d["device"] = c.device;
  d["ab"] = ToPython(c.ab);
  d["stored_at"] = c.stored_at;
  return d;
}

py::dict Performance(const OperatorModel& op) {
  py::dict d;
  const OperatorPerformance& perf = *op.performance;
  d["speedup"] = perf.speedup ? py::object(py::float_(*perf.speedup)) : py::object(py::none());
  d["framework_ms"] =
      perf.framework_ms ? py::object(py::float_(*perf.framework_ms)) : py::object(py::none());
  d["implementation_ms"] = perf.implementation_ms ? py::object(py::float_(*perf.implementation_ms))
                                                  : py::object(py::none());
  const std::optional<double> geomean = GeomeanLatency(op);
  d["geomean_latency_ms"] = geomean ? py::object(py::float_(*geomean)) : py::object(py::none());
  d["device"] = BenchDevice(op);
  py::list shapes;
  for (const ShapeResult& shape : perf.result.shapes)
    shapes.append(ToPython(ShapeResultToJson(shape)));
  d["shapes"] = shapes;
  return d;
}

// The keys of summary.json's run account that load_run() passes on as run_info.
json RunInfoOf(const json& summary) {
  json run_info = json::object();
  if (summary.is_object()) {
    for (const char* key : {"manifest", "manifest_name", "ranks", "launcher", "backend", "store",
                            "resumed", "timing", "part", "shard", "stopped_by_signal",
                            "stopped_by_time_limit", "unassigned_items", "opverify"}) {
      if (summary.contains(key)) run_info[key] = summary[key];
    }
  }
  return run_info;
}

// Per operator, its counts, errors, repro and performance; each case goes
// to *cases (a dict) and *flat (the record), in the same order.
py::dict OperatorsDict(const RunModel& run, py::list* cases, std::vector<const CaseRecord*>* flat) {
  py::dict operators;
  for (const OperatorModel& op : run.operators) {
    py::dict o;
    o["passed"] = op.passed;  // without a waiver
    o["waived"] = op.waived;
    o["failed"] = op.failed;
    o["cases"] = op.cases.size();
    o["error_types"] = op.error_types;
    o["repro"] = op.repro;
    o["performance"] = op.performance ? py::object(Performance(op)) : py::object(py::none());
    operators[py::str(op.name)] = o;
    for (const CaseRecord& c : op.cases) {
      cases->append(CaseDict(c));
      flat->push_back(&c);
    }
  }
  return operators;
}

// numpy arrays with one entry per case, in the order of `flat`.
py::dict MetricsDict(const std::vector<const CaseRecord*>& flat) {
  const auto n = static_cast<py::ssize_t>(flat.size());
  py::array_t<bool> passed(n);
  py::array_t<double> wall_ms(n), max_abs(n), max_rel(n);
  for (py::ssize_t i = 0; i < n; ++i) {
    const CaseRecord& c = *flat[static_cast<std::size_t>(i)];
    passed.mutable_at(i) = c.passed;
    wall_ms.mutable_at(i) = c.timings.value("wall_ms", std::numeric_limits<double>::quiet_NaN());
    max_abs.mutable_at(i) = MetricOrNan(c, "max_abs_diff");
    max_rel.mutable_at(i) = MetricOrNan(c, "max_rel_diff");
  }
  py::list ids;
  for (const CaseRecord* c : flat) ids.append(c->case_id);
  py::dict metrics;
  metrics["case_id"] = py::module_::import("numpy").attr("array")(ids, "object");
  metrics["passed"] = passed;
  metrics["wall_ms"] = wall_ms;
  metrics["max_abs_diff"] =
      max_abs;  // the worst over the case's outputs; nan where none was judged
  metrics["max_rel_diff"] = max_rel;
  return metrics;
}

// case id -> "passed", "waived" or its error type.
py::dict VerdictsDict(const std::vector<const CaseRecord*>& flat) {
  py::dict verdicts;
  for (const CaseRecord* c : flat) {
    verdicts[py::str(c->case_id)] = c->waived   ? py::object(py::str("waived"))
                                    : c->passed ? py::object(py::str("passed"))
                                                : py::object(py::str(c->error_type));
  }
  return verdicts;
}

py::list SkippedList(const RunModel& run) {
  py::list skipped;
  for (const SkippedCase& s : run.skipped) {
    py::dict d;
    d["op"] = s.op;
    d["case_id"] = s.case_id;
    d["reason"] = s.reason;
    skipped.append(d);
  }
  return skipped;
}

}  // namespace

py::dict LoadRun(const std::string& run_dir) {
  const std::filesystem::path dir = std::filesystem::absolute(run_dir);
  if (!std::filesystem::is_directory(dir / "shards")) {
    throw py::value_error(dir.string() + ": not a run folder (no shards/)");
  }
  std::vector<std::string> problems;
  Result<std::vector<CaseRecord>> records = ReadRunRecords(dir.string(), &problems);
  if (!records.ok()) throw std::runtime_error(dir.string() + ": " + records.status().ToString());
  const json summary = ReadJsonFile(dir / "summary.json");
  const json run_info = RunInfoOf(summary);
  RunModel run = BuildRunModel(std::move(records.value()), problems, run_info, dir.string());
  AddSkippedCases(ReadJsonFile(dir / "selection.json"), &run);
  py::list cases;
  std::vector<const CaseRecord*> flat;
  py::dict operators = OperatorsDict(run, &cases, &flat);
  py::dict out;
  out["run_dir"] = dir.string();
  out["run_info"] = ToPython(run_info);
  out["totals"] =
      py::dict(py::arg("operators") = run.totals.operators, py::arg("cases") = run.totals.cases,
               py::arg("passed") = run.totals.passed, py::arg("waived") = run.totals.waived,
               py::arg("failed") = run.totals.failed);
  out["cases"] = cases;
  out["verdicts"] = VerdictsDict(flat);
  out["metrics"] = MetricsDict(flat);
  out["operators"] = operators;
  out["performance"] =
      ToPython(summary.is_object() && summary.contains("performance") ? summary["performance"]
                                                                      : json(nullptr));
  out["skipped"] = SkippedList(run);
  out["problems"] = run.problems;
  return out;
}

}  // namespace opverify
