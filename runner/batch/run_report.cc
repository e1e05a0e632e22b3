#include "runner/batch/run_report.h"

#include <filesystem>
#include <fstream>
#include <map>

#include "runner/store/shard.h"
#include "runner/verify/verify_result.h"

namespace fs = std::filesystem;

namespace opverify {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

struct OperatorCases {
  std::vector<const CaseRecord*> cases;  // sorted by case index
  json facts = json::object();           // environment, lint, non_compute, impl_name
};

Status WriteJson(const fs::path& path, const ordered_json& value) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary);
    out << value.dump(2) << "\n";
    if (!out) return Status::IoError("cannot write " + temporary.string());
  }
  fs::rename(temporary, path, ec);
  if (ec) return Status::IoError("cannot rename " + temporary.string() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

Result<RunTotals> WriteRunReports(const std::string& run_dir, const json& run_info) {
  std::vector<std::string> problems;
  Result<std::vector<CaseRecord>> records = ReadRunRecords(run_dir, &problems);
  if (!records.ok()) return records.status();
  std::map<std::string, OperatorCases> ops;
  for (const CaseRecord& r : records.value()) {
    OperatorCases& op = ops[r.op_name];
    if (r.extra.value("kind", "") == "operator") {
      for (auto& [key, value] : r.extra.items()) op.facts[key] = value;
    } else {
      op.cases.push_back(&r);
    }
  }
  RunTotals totals;
  ordered_json operators = ordered_json::array();
  ordered_json failures = ordered_json::array();
  std::map<std::string, int> by_error;
  std::map<std::string, int> by_ab;
  std::map<std::string, double> spent_ms;  // summed per-case timings
  for (auto& [name, op] : ops) {
    std::sort(op.cases.begin(), op.cases.end(),
              [](const CaseRecord* a, const CaseRecord* b) { return a->case_index < b->case_index; });
    SeedResultParts parts;
    parts.op_name = name;
    parts.total_cases = static_cast<int>(op.cases.size());
    double wall_ms = 0;
    std::map<std::string, int> op_errors;
    for (const CaseRecord* c : op.cases) {
      parts.passed_cases += c->passed ? 1 : 0;
      if (c->extra.contains("details")) parts.details.push_back(ordered_json::parse(c->extra["details"].dump()));
      wall_ms += c->timings.value("wall_ms", 0.0);
      for (const char* key : {"construct_ms", "probe_ms", "compile_ms", "golden_ms", "impl_ms", "judge_ms", "wall_ms"}) {
        spent_ms[key] += c->timings.value(key, 0.0);
      }
      if (c->passed) continue;
      if (c->extra.contains("failure")) parts.failures.push_back(ordered_json::parse(c->extra["failure"].dump()));
      op_errors[c->error_type]++;
      by_error[c->error_type]++;
      ordered_json failure = {{"case_id", c->case_id}, {"op", name}, {"error_type", c->error_type},
                              {"error_msg", c->error_msg.substr(0, 300)}, {"rank", c->rank},
                              {"stored_at", c->stored_at}};
      if (c->ab.is_object()) {
        failure["ab"] = c->ab.value("classification", json(nullptr));
        by_ab[c->ab.value("classification", std::string("none"))]++;
      }
      failures.push_back(std::move(failure));
    }
    parts.environment = op.facts.value("environment", json(nullptr));
    parts.lint = op.facts.value("lint", json(nullptr));
    parts.non_compute = op.facts.value("non_compute", false);
    VerifyContext context;
    context.impl_name = op.facts.value("impl_name", "");
    Status written = WriteJson(fs::path(run_dir) / "ops" / name / "verify_result.json",
                               SeedVerifyResult(parts, context));
    if (!written.ok()) return written;
    totals.operators += 1;
    totals.cases += parts.total_cases;
    totals.passed += parts.passed_cases;
    operators.push_back({{"name", name}, {"cases", parts.total_cases}, {"passed", parts.passed_cases},
                         {"failed", parts.total_cases - parts.passed_cases}, {"error_types", op_errors},
                         {"wall_s", wall_ms / 1e3}});
  }
  totals.failed = totals.cases - totals.passed;
  ordered_json summary;
  summary["run_dir"] = fs::absolute(run_dir).string();
  for (auto& [key, value] : run_info.items()) summary[key] = value;
  summary["totals"] = {{"operators", totals.operators}, {"cases", totals.cases}, {"passed", totals.passed},
                       {"failed", totals.failed}};
  // Where the ranks' time went. "compile" is Triton's compilation (the
  // first launch of each kernel specialisation in an executor, timed by the
  // executor's compile clock) and is not in construct, probe or impl;
  // "probe" is the hidden-state probe before a first case; "executor" is the rest of a
  // case's wall time (requests, tensor hand-over, restarts after a failure);
  // "startup" is per work item: starting an executor, importing torch and
  // the operator, the lint; idle is what remains of ranks x run wall time
  // (waiting for work, the last ranks finishing).
  if (run_info.contains("timing") && run_info["timing"].contains("run_wall_s")) {
    const json& t = run_info["timing"];
    const double ranks = run_info.value("ranks", 1);
    const double capacity = ranks * t["run_wall_s"].get<double>();
    const double cases_s = spent_ms["wall_ms"] / 1e3;
    const double judged_s = (spent_ms["construct_ms"] + spent_ms["probe_ms"] + spent_ms["compile_ms"] +
                             spent_ms["golden_ms"] + spent_ms["impl_ms"] + spent_ms["judge_ms"]) / 1e3;
    const double store_s = t.value("store_s", 0.0), ab_s = t.value("ab_s", 0.0);
    const double items_s = t.value("item_s", cases_s + store_s + ab_s);
    const double idle_s = std::max(0.0, capacity - items_s);
    summary["time_split"] = {{"rank_seconds", capacity},
                             {"compile_s", spent_ms["compile_ms"] / 1e3},
                             {"construct_s", spent_ms["construct_ms"] / 1e3},
                             {"probe_s", spent_ms["probe_ms"] / 1e3},
                             {"golden_s", spent_ms["golden_ms"] / 1e3},
                             {"impl_s", spent_ms["impl_ms"] / 1e3},
                             {"judge_s", spent_ms["judge_ms"] / 1e3},
                             {"executor_s", std::max(0.0, cases_s - judged_s)},
                             {"store_s", store_s},
                             {"ab_s", ab_s},
                             {"startup_s", std::max(0.0, items_s - cases_s - store_s - ab_s)},
                             {"idle_s", idle_s},
                             {"idle_fraction", capacity > 0 ? idle_s / capacity : 0.0}};
  }
  summary["error_types"] = by_error;
  summary["ab"] = by_ab;
  summary["operators"] = std::move(operators);
  summary["failures"] = std::move(failures);
  summary["problems"] = problems;
  Status written = WriteJson(fs::path(run_dir) / "summary.json", summary);
  if (!written.ok()) return written;
  return totals;
}

}  // namespace opverify
