#include "reduce/run_report.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>
#include <utility>
#include <vector>

#include "reduce/html_reporter.h"
#include "reduce/junit_reporter.h"
#include "reduce/markdown_reporter.h"
#include "reduce/operator_triage.h"
#include "reduce/perf_result_reporter.h"
#include "reduce/precision_reporter.h"
#include "reduce/skipped_cases.h"
#include "reduce/summary_json_reporter.h"
#include "reduce/verify_result_reporter.h"
#include "runner/common/console_style.h"
#include "runner/common/failure_list.h"
#include "runner/common/terminal_text.h"
#include "runner/common/user_file.h"
#include "runner/manifest/manifest.h"
#include "runner/store/run_plan.h"
#include "runner/store/run_records.h"

namespace opverify {
namespace {

// Runs `reporter` through its three calls; the first error it reports. A
// reporter that throws (a record of a shape no check foresaw) is an error
// naming it and what it met: the other reporters still write their files.
Status Report(Reporter& reporter, const Reporter::Context& context, const RunModel& run,
              const char* name) {
  try {
    reporter.ReportContext(context);
    Status reported = reporter.ReportRun(run);
    Status finalized = reporter.Finalize();
    return reported.ok() ? finalized : reported;
  } catch (const std::exception& e) {
    return Status::Internal(std::string(name) + " not written: " + e.what());
  }
}

// selection.json (what opverify-batch chose to run), or null without one.
// A FIFO or device in its place is refused, never waited on or read forever.
nlohmann::json ReadSelectionFile(const std::string& run_dir) {
  const Result<std::string> text = ReadUserFile(
      (std::filesystem::path(run_dir) / "selection.json").string(), "selection file", 1u << 30);
  if (!text.ok()) {
    if (text.status().code() != Status::Code::kNotFound)
      spdlog::warn("{} (the cases it left out are not listed)", text.status().message());
    return nullptr;
  }
  return nlohmann::json::parse(text.value(), nullptr, false);  // discarded (unreadable): null-like
}

}  // namespace

void ReadManifestTags(const nlohmann::json& run_info, ReportExtras* extras) {
  if (!run_info.contains("manifest") || !run_info["manifest"].is_string()) {
    extras->tags_note = "the run records no manifest";
    return;
  }
  Result<JobManifest> manifest = LoadManifest(run_info["manifest"].get<std::string>());
  if (!manifest.ok()) {
    extras->tags_note = "its manifest cannot be read: " + manifest.status().message();
    return;
  }
  for (const OperatorJob& op : manifest->operators) {
    if (!op.tags.empty()) extras->tags[op.name] = op.tags;
  }
  if (extras->tags.empty()) extras->tags_note = "its manifest gives no tags";
}

Result<RunTotals> WriteRunReports(const std::string& run_dir, const nlohmann::json& run_info,
                                  RunModel* model, const ExtrasStep& extras) {
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
  return WriteModelReports(std::move(run), run_dir, model, extras);
}

Result<RunTotals> WriteModelReports(RunModel run, const std::string& run_dir, RunModel* model,
                                    const ExtrasStep& extras) {
  // The data files first: the extras step (a baseline diff) reads them.
  using Named = std::pair<const char*, std::unique_ptr<Reporter>>;
  std::vector<Named> data, readable;
  data.emplace_back("verify_result.json", std::make_unique<VerifyResultReporter>());
  data.emplace_back("perf_result.json", std::make_unique<PerfResultReporter>());
  data.emplace_back("precision_report.md", std::make_unique<PrecisionReporter>());
  data.emplace_back("summary.json", std::make_unique<SummaryJsonReporter>());
  data.emplace_back("junit.xml", std::make_unique<JUnitReporter>());
  readable.emplace_back("report.md", std::make_unique<MarkdownReporter>());
  readable.emplace_back("report.html", std::make_unique<HtmlReporter>());
  ReportExtras more;
  ReadManifestTags(run.run_info, &more);
  std::string errors;
  for (auto* group : {&data, &readable}) {
    if (group == &readable && extras) {
      extras(run, &more);
      // The gates CI reads (history, references, the baseline's regressions)
      // go into summary.json and junit.xml too: written again with them.
      if (more.trend || more.references || more.baseline) {
        readable.emplace(readable.begin(), "junit.xml", std::make_unique<JUnitReporter>());
        readable.emplace(readable.begin(), "summary.json", std::make_unique<SummaryJsonReporter>());
      }
    }
    for (const auto& [name, reporter] : *group) {
      Status reported = Report(*reporter, {run_dir, &more}, run, name);
      if (!reported.ok()) errors += (errors.empty() ? "" : "; ") + reported.ToString();
    }
  }
  if (!errors.empty()) return Status::IoError(errors);
  const RunTotals totals = run.totals;
  if (model != nullptr) *model = std::move(run);
  return totals;
}

std::string TotalsLine(const RunTotals& totals, bool colour) {
  const std::string failed = std::to_string(totals.failed) + " failed";
  return std::to_string(totals.operators) + " operators, " + std::to_string(totals.cases) +
         " cases: " +
         Paint(std::to_string(totals.passed) + " passed", Colour::kGreen,
               colour && totals.passed > 0) +
         ", " + (totals.waived > 0 ? std::to_string(totals.waived) + " waived, " : std::string()) +
         Paint(failed, Colour::kRed, colour && totals.failed > 0);
}

namespace {

// `line` with its first word (`prefix`: FAILED) in `colour` on a terminal.
std::string Marked(const std::string& line, const std::string& prefix, Colour colour, bool on) {
  if (!on || line.rfind(prefix, 0) != 0) return line;
  return Paint(prefix, colour, true) + line.substr(prefix.size());
}

}  // namespace

void PrintDeclaredExceptions(const RunModel& run, std::FILE* out) {
  std::size_t shown = 0;
  for (const WaivedRow& w : run.waived) {
    if (++shown > kFailureListCap) break;
    std::string allowed;
    if (w.waivers.is_array()) {
      for (const nlohmann::json& waiver : w.waivers)
        allowed += (allowed.empty() ? "" : "; ") + WaiverLine(waiver);
    }
    std::fprintf(out, "%s %s  %s\n", Paint("WAIVED", Colour::kYellow, ColourWanted(out)).c_str(),
                 TerminalLine(w.case_id, 200).c_str(), TerminalLine(allowed, 300).c_str());
  }
  if (run.waived.size() > kFailureListCap)
    std::fprintf(out, "... and %zu more waived cases (report.md)\n",
                 run.waived.size() - kFailureListCap);
  for (const std::string& line : run.StaleAllowanceLines())
    std::fprintf(stderr, "warning: %s\n", TerminalLine(line, 500).c_str());
}

void PrintFailedCases(const RunModel& run, const std::string& run_dir, std::FILE* out) {
  std::vector<FailedCase> failed;
  for (const FailureRow& f : run.failures)
    failed.push_back({f.case_id, f.error_type.text(), f.message, f.AbClass().value_or("")});
  const std::string report = (std::filesystem::path(run_dir) / "report.md").string();
  const bool colour = ColourWanted(out);
  for (const std::string& line : FailureListLines(failed, kFailureListCap, report))
    std::fprintf(out, "%s\n", Marked(line, "FAILED", Colour::kRed, colour).c_str());
}

void PrintNotRunCases(const RunModel& run, std::FILE* out) {
  std::size_t shown = 0, not_run = 0;
  for (const SkippedCase& skipped : run.skipped) {
    if (!IsNotRun(skipped)) continue;
    ++not_run;
    if (++shown > kFailureListCap) continue;
    std::fprintf(out, "%s %s  %s\n", Paint("NOT RUN", Colour::kYellow, ColourWanted(out)).c_str(),
                 TerminalLine(skipped.case_id, 200).c_str(),
                 TerminalLine(skipped.reason, 200).c_str());
  }
  if (not_run > kFailureListCap)
    std::fprintf(out, "... and %zu more not run (summary.json's not_run)\n",
                 not_run - kFailureListCap);
}

void PrintOperatorTriage(const RunModel& run, std::FILE* out, const VerdictTrend* trend) {
  const std::vector<OperatorTriage> triage = TriageByOperator(run);
  if (!triage.empty())
    std::fprintf(out, "%s\n",
                 Paint("failing operators (" + std::to_string(triage.size()) + "):", Colour::kRed,
                       ColourWanted(out))
                     .c_str());
  for (std::size_t i = 0; i < triage.size() && i < kFailureListCap; ++i) {
    const std::string since = trend != nullptr ? FailingSinceText(*trend, triage[i].op) : "";
    std::fprintf(out, "  %s\n", TriageLine(triage[i], since).c_str());
  }
  if (triage.size() > kFailureListCap)
    std::fprintf(out, "  ... and %zu more (report.md)\n", triage.size() - kFailureListCap);
  if (trend != nullptr) {
    std::fprintf(
        out,
        "history: %zu still failing, %zu newly failing, %zu newly passing (%d earlier nights)\n",
        trend->still_failing.size(), trend->newly_failing.size(), trend->newly_passing.size(),
        trend->nights);
  }
}

}  // namespace opverify
