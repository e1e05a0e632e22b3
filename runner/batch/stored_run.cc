#include "runner/batch/stored_run.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/results/bench_result.h"
#include "runner/store/record_facts.h"
#include "runner/store/run_records.h"

namespace fs = std::filesystem;

namespace opverify {

namespace {

// Each operator's seconds on its ranks (every item of it, start-up and
// benchmark included) from the run's summary.json timeline; empty when it
// has none (a run before the timeline, or reports not written).
std::map<std::string, double> TimelineSeconds(const std::string& run_dir) {
  std::map<std::string, double> seconds;
  std::ifstream in(fs::path(run_dir) / "summary.json");
  if (!in) return seconds;
  const nlohmann::json summary = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!summary.is_object() || !summary.contains("timeline") || !summary["timeline"].is_object())
    return seconds;
  const nlohmann::json items = summary["timeline"].value("items", nlohmann::json::array());
  if (!items.is_array()) return seconds;
  for (const nlohmann::json& item : items) {
    // The file is data: a field of another type is passed over, never fatal.
    if (!item.is_object() || !item.contains("op") || !item["op"].is_string() ||
        !item.contains("start_s") || !item["start_s"].is_number() || !item.contains("end_s") ||
        !item["end_s"].is_number())
      continue;
    seconds[item["op"].get<std::string>()] +=
        std::max(0.0, item["end_s"].get<double>() - item["start_s"].get<double>());
  }
  return seconds;
}

}  // namespace

std::map<std::string, double> PreviousSeconds(const std::string& run_dir) {
  if (run_dir.empty()) return {};
  std::map<std::string, double> seconds = TimelineSeconds(run_dir);
  if (!seconds.empty()) return seconds;
  std::vector<std::string> problems;
  Result<std::vector<CaseRecord>> records = ReadRunRecords(run_dir, &problems);
  if (!records.ok()) {
    spdlog::warn("--previous {}: {}; keeping manifest order", run_dir, records.status().ToString());
    return seconds;
  }
  for (const CaseRecord& r : records.value())
    seconds[r.op_name] += r.timings.get<CaseTimings>().wall_ms / 1e3;
  return seconds;
}

bool LoadResumeState(const std::string& run_dir, WorkerSetup* setup) {
  std::vector<std::string> problems;
  Result<std::vector<CaseRecord>> stored = ReadRunRecords(run_dir, &problems);
  if (!stored.ok()) {
    spdlog::error("--resume: {}", stored.status().ToString());
    return false;
  }
  for (const CaseRecord& r : stored.value()) {
    if (r.kind == RecordKind::kCase) setup->done[r.case_id] = r.passed;
    if (r.kind == RecordKind::kBenchShape)
      setup->benched.insert(r.extra.get<BenchShapeFacts>().case_id);
    if (r.kind == RecordKind::kOperator || r.kind == RecordKind::kBenchItem)
      setup->facts.insert(r.case_id);
  }
  for (const auto& problem : problems) spdlog::warn("--resume: will run again: {}", problem);
  spdlog::info("resuming: {} cases already stored", setup->done.size());
  return true;
}

}  // namespace opverify
