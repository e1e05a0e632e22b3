#include "reduce/run_report.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "reduce/html_reporter.h"
#include "reduce/junit_reporter.h"
#include "reduce/markdown_reporter.h"
#include "reduce/perf_result_reporter.h"
#include "reduce/precision_reporter.h"
#include "reduce/skipped_cases.h"
#include "reduce/summary_json_reporter.h"
#include "reduce/verify_result_reporter.h"
#include "runner/common/failure_list.h"
#include "runner/store/run_plan.h"
#include "runner/store/run_records.h"

namespace opverify {
namespace {

// Runs `reporter` through its three calls; the first error it reports.
Status Report(Reporter& reporter, const Reporter::Context& context, const RunModel& run) {
  reporter.ReportContext(context);
  Status reported = reporter.ReportRun(run);
  Status finalized = reporter.Finalize();
  return reported.ok() ? finalized : reported;
}

// selection.json (what opverify-batch chose to run), or null without one.
nlohmann::json ReadSelectionFile(const std::string& run_dir) {
  std::ifstream in(std::filesystem::path(run_dir) / "selection.json");
  if (!in) return nullptr;
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str(), nullptr, false);  // discarded (unreadable): null-like
}

}  // namespace

Result<RunTotals> WriteRunReports(const std::string& run_dir, const nlohmann::json& run_info,
                                  RunModel* model) {
  std::vector<std::string> problems;
  Result<std::vector<CaseRecord>> records = ReadRunRecords(run_dir, &problems);
  if (!records.ok()) return records.status();
  Result<std::optional<RunPlan>> plan = ReadRunPlan(run_dir);
  if (!plan.ok()) problems.push_back(plan.status().ToString());
  RunModel run = BuildRunModel(std::move(records.value()), std::move(problems), run_info,
                               std::filesystem::absolute(run_dir).string(),
                               plan.ok() ? plan.value() : std::nullopt);
  for (const std::string& line : run.incomplete) spdlog::warn("results missing: {}", line);
  AddSkippedCases(ReadSelectionFile(run_dir), &run);
  std::vector<std::unique_ptr<Reporter>> reporters;
  reporters.push_back(std::make_unique<VerifyResultReporter>());
  reporters.push_back(std::make_unique<PerfResultReporter>());
  reporters.push_back(std::make_unique<PrecisionReporter>());
  reporters.push_back(std::make_unique<SummaryJsonReporter>());
  reporters.push_back(std::make_unique<JUnitReporter>());
  reporters.push_back(std::make_unique<MarkdownReporter>());
  reporters.push_back(std::make_unique<HtmlReporter>());
  std::string errors;
  for (const auto& reporter : reporters) {
    Status reported = Report(*reporter, {run_dir}, run);
    if (!reported.ok()) errors += (errors.empty() ? "" : "; ") + reported.ToString();
  }
  if (!errors.empty()) return Status::IoError(errors);
  const RunTotals totals = run.totals;
  if (model != nullptr) *model = std::move(run);
  return totals;
}

void PrintFailedCases(const RunModel& run, const std::string& run_dir, std::FILE* out) {
  std::vector<FailedCase> failed;
  for (const FailureRow& f : run.failures) failed.push_back({f.case_id, f.error_type, f.message});
  const std::string report = (std::filesystem::path(run_dir) / "report.md").string();
  for (const std::string& line : FailureListLines(failed, kFailureListCap, report))
    std::fprintf(out, "%s\n", line.c_str());
}

}  // namespace opverify
