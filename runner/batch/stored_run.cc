#include "runner/batch/stored_run.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "reduce/history.h"
#include "runner/results/bench_result.h"
#include "runner/store/record_facts.h"
#include "runner/store/run_records.h"

namespace fs = std::filesystem;

namespace opverify {

std::map<std::string, double> PreviousSeconds(const std::string& run_dir, const char* flag) {
  if (run_dir.empty()) return {};
  std::ifstream in(fs::path(run_dir) / "summary.json");
  const nlohmann::json summary =
      in ? nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false) : nlohmann::json();
  std::map<std::string, double> seconds =
      summary.is_object() && summary.contains("timeline")
          ? TimelineOperatorSeconds(summary["timeline"])
          : std::map<std::string, double>{};
  if (!seconds.empty()) return seconds;
  std::vector<std::string> problems;
  Result<std::vector<CaseRecord>> records = ReadRunRecords(run_dir, &problems);
  if (!records.ok()) {
    spdlog::warn("{} {}: {}; the plan does not read its times", flag, run_dir,
                 records.status().ToString());
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
