#include "reduce/markdown_reporter.h"

#include "reduce/operator_triage.h"

#include <filesystem>
#include <iomanip>
#include <set>
#include <sstream>

#include "reduce/report_extras.h"
#include "reduce/report_file.h"
#include "reduce/skipped_cases.h"
#include "reduce/text_escape.h"

namespace opverify {
namespace {

// A number with `decimals` decimals and a suffix ("1.53x"), or "-" when there is none.
std::string Number(const std::optional<double>& value, int decimals, const char* suffix = "") {
  if (!value) return "-";
  std::ostringstream text;
  text << std::fixed << std::setprecision(decimals) << *value << suffix;
  return text.str();
}

// "- slower (2): `a` +12.0% (noise floor 4.1%, 50 repeats), ..."; nothing for an empty list.
void SpeedLine(std::ostringstream& md, const char* what, const std::vector<SpeedChange>& changes) {
  if (changes.empty()) return;
  md << "- " << what << " (" << changes.size() << "):";
  for (std::size_t i = 0; i < changes.size(); ++i) {
    md << (i == 0 ? " " : ", ") << MarkdownCode(changes[i].op) << " "
       << (changes[i].ratio > 1 ? "+" : "") << Number((changes[i].ratio - 1) * 100, 1, "%")
       << " (noise floor " << Number(changes[i].noise_floor * 100, 1, "%") << ", "
       << changes[i].repeats << " repeats)";
  }
  md << "\n";
}

void NamesLine(std::ostringstream& md, const char* what, const std::vector<std::string>& names) {
  if (names.empty()) return;
  md << "- " << what << " (" << names.size() << "):";
  for (std::size_t i = 0; i < names.size(); ++i)
    md << (i == 0 ? " " : ", ") << MarkdownCode(names[i]);
  md << "\n";
}

// The comparison with --baseline and the --references check, where given.
void AgainstBaseline(std::ostringstream& md, const ReportExtras* extras) {
  if (extras == nullptr) return;
  if (extras->baseline) {
    const BaselineDiff& d = *extras->baseline;
    md << "## Against the baseline\n\n"
       << MarkdownCode(extras->baseline_dir) << ": **"
       << (d.regressed() ? "REGRESSED" : "no regression") << "**\n\n";
    NamesLine(md, "newly failing", d.newly_failing);
    SpeedLine(md, "slower", d.slower);
    NamesLine(md, d.allow_missing ? "missing (allowed)" : "missing", d.missing);
    NamesLine(md, "reference_suspect (failing, not counted as a regression)", d.reference_suspect);
    NamesLine(md, "fixed", d.fixed);
    SpeedLine(md, "faster", d.faster);
    NamesLine(md, "new", d.added);
    md << "\n";
  }
  if (extras->references) {
    const ReferenceCheck& r = *extras->references;
    md << "## Performance references\n\n"
       << r.results.size() << " checked, " << r.violations << " outside their bounds, "
       << r.unmeasured << " not measured.\n\n";
    for (const ReferenceResult& result : r.results) {
      if (result.violated) md << "- " << MarkdownCell(result.message, 500) << "\n";
    }
    if (r.violations > 0) md << "\n";
  }
}

// The cases that passed under declared exceptions, and the allowances no
// case needed: visible, so that an exception is accepted knowingly and goes
// once the code that needed it does.
void DeclaredExceptions(std::ostringstream& md, const RunModel& run) {
  if (!run.waived.empty()) {
    md << "\n## Waived (declared exceptions)\n\nPassed, and judged for accuracy, using torch "
          "operators the manifest allows (`allow_torch`):\n\n| case | allowed | why | found at "
          "|\n|---|---|---|---|\n";
    for (const WaivedRow& w : run.waived) {
      if (!w.waivers.is_array()) continue;
      for (const nlohmann::json& waiver : w.waivers) {
        if (!waiver.is_object()) continue;
        md << "| " << MarkdownCell(w.case_id, 200) << " | "
           << MarkdownCode(WaiverField(waiver, "op")) << " | "
           << MarkdownCell(WaiverField(waiver, "why"), 300) << " | "
           << MarkdownCell(FindingsText(waiver), 400) << " |\n";
      }
    }
  }
  const std::vector<std::string> stale = run.StaleAllowanceLines();
  if (!stale.empty()) {
    md << "\n## Stale allowances\n\nDeclared exceptions no case of the run needed:\n\n";
    for (const std::string& line : stale) md << "- " << MarkdownCell(line, 500) << "\n";
  }
}

// Tonight against the --history file's earlier nights: the still failing
// (since when), the newly failing, the newly passing.
void SinceWhen(std::ostringstream& md, const ReportExtras* extras) {
  if (extras == nullptr || !extras->trend) return;
  const VerdictTrend& t = *extras->trend;
  md << "## Since when\n\nAgainst " << t.nights << " earlier nights of " << MarkdownCode(t.file)
     << ":\n\n";
  const auto streaks = [&md](const char* what, const std::vector<FailingStreak>& list) {
    md << "- " << what << " (" << list.size() << ")" << (list.empty() ? "" : ":");
    for (std::size_t i = 0; i < list.size(); ++i) {
      md << (i == 0 ? " " : ", ") << MarkdownCode(list[i].op) << " since " << list[i].since << " ("
         << list[i].nights << (list[i].nights == 1 ? " night)" : " nights)");
    }
    md << "\n";
  };
  streaks("still failing", t.still_failing);
  streaks("newly failing", t.newly_failing);
  md << "- newly passing (" << t.newly_passing.size() << ")"
     << (t.newly_passing.empty() ? "" : ":");
  for (std::size_t i = 0; i < t.newly_passing.size(); ++i)
    md << (i == 0 ? " " : ", ") << MarkdownCode(t.newly_passing[i]);
  md << "\n\n";
}

// The failing operators first (reduce/operator_triage.h): one row each,
// before the big table; since when each fails, with --history.
void FailingOperators(std::ostringstream& md, const RunModel& run, const ReportExtras* extras) {
  const std::vector<OperatorTriage> triage = TriageByOperator(run);
  if (triage.empty()) return;
  const VerdictTrend* trend = extras != nullptr && extras->trend ? &*extras->trend : nullptr;
  md << "## Failing operators\n\n| operator | failed | error (A/B of the first) | "
     << (trend ? "since | " : "") << "first failure | repro |\n|---|---|---|"
     << (trend ? "---|" : "") << "---|---|\n";
  for (const OperatorTriage& t : triage) {
    md << "| " << MarkdownCell(t.op, 200) << " | " << t.failed << "/" << t.cases << " | "
       << MarkdownCell(t.error_type + (t.ab.empty() ? "" : " (" + t.ab + ")"), 200) << " | ";
    if (trend) md << MarkdownCell(FailingSinceText(*trend, t.op), 100) << " | ";
    md << MarkdownCell(t.first_case_id + ": " + t.first_message, 200) << " | "
       << MarkdownCode(t.repro) << " |\n";
  }
  md << "\n";
}

// The title and what ran: the folder, the manifest, the build, the totals.
void Summary(std::ostringstream& md, const RunModel& run) {
  const RunTotals& totals = run.totals;
  md << "# opverify run\n\n";
  md << "- run folder: " << MarkdownCode(run.run_dir) << "\n";
  if (run.info.manifest) md << "- manifest: " << MarkdownCode(*run.info.manifest) << "\n";
  if (const std::string built = RunVersionLine(run.info); !built.empty())
    md << "- " << built << "\n";
  md << "- operators: " << totals.operators << ", cases: " << totals.cases
     << ", passed: " << totals.passed
     << (totals.waived > 0 ? ", waived: " + std::to_string(totals.waived) : std::string())
     << ", failed: " << totals.failed << "\n\n";
}

// Why the run is incomplete, where it is: results lost, or stopped early.
void Incomplete(std::ostringstream& md, const RunModel& run) {
  if (run.totals.lost > 0) {
    md << "## Lost results\n\nThis run is not complete: " << run.totals.lost
       << " of its results are unreadable or missing, so it is no pass whatever the rest says.\n\n";
    for (const auto* lines : {&run.problems, &run.incomplete}) {
      for (const std::string& line : *lines) md << "- " << MarkdownCell(line, 500) << "\n";
    }
    md << "\n";
  }
  if (const std::vector<std::string> stopped = StoppedEarlyLines(run); !stopped.empty()) {
    md << "## Stopped early\n\n" << MarkdownCell(stopped.front(), 1000) << "\n\n";
    for (std::size_t i = 1; i < stopped.size(); ++i)
      md << "- " << MarkdownCell(stopped[i], 300) << "\n";
    if (stopped.size() > 1) md << "\n";
  }
}

// One row per operator, then the run's performance summary.
void OperatorsAndPerformance(std::ostringstream& md, const RunModel& run) {
  md << "## Operators\n\n| operator | cases | passed | failed | errors | speedup "
        "|\n|---|---|---|---|---|---|\n";
  for (const OperatorModel& op : run.operators) {
    std::string errors;
    for (const auto& [type, count] : op.error_types)
      errors += type + " " + std::to_string(count) + " ";
    md << "| " << MarkdownCell(op.name, 200) << " | " << op.passed + op.waived + op.failed << " | "
       << op.passed
       << (op.waived > 0 ? " (+" + std::to_string(op.waived) + " waived)" : std::string()) << " | "
       << op.failed << " | " << MarkdownCell(errors, 200) << " | "
       << (op.performance ? Number(op.performance->speedup, 2, "x") : "-") << " |\n";
  }
  const PerformanceModel& p = run.performance;
  md << "\n## Performance\n\n- geometric mean speedup: " << Number(p.geomean_speedup, 3, "x")
     << "\n";
  for (const auto& [label, share] : p.fast_p)
    md << "- fast_" << label << ": " << Number(share, 2) << "\n";
  for (const auto& [dtype, speed] : p.by_dtype) {
    md << "- " << MarkdownCell(dtype) << ": " << Number(speed.geomean_speedup, 3, "x") << " over "
       << speed.shapes << " shapes\n";
  }
  for (const auto& r : p.review) md << "- review: " << MarkdownCell(r, 200) << "\n";
}

// The failures whose reference is the suspect: failed, and not counted as
// regressions by opverify-reduce --baseline.
void ReferenceSuspects(std::ostringstream& md, const RunModel& run) {
  bool suspects = false;
  for (const FailureRow& f : run.failures) suspects |= f.reference_suspect();
  if (!suspects) return;
  md << "\n## Reference suspects\n\nFailed against the CPU golden, but the reference is the "
        "suspect "
        "(docs/JUDGE.md, reference trust): the verdict stays failed, and `opverify-reduce "
        "--baseline` does "
        "not count them as regressions.\n\n| case | float64 golden | torch's device run vs CPU "
        "golden | why "
        "|\n|---|---|---|---|\n";
  for (const FailureRow& f : run.failures) {
    if (!f.reference_suspect()) continue;
    const ReferenceTrust* t = f.Trust();
    md << "| " << MarkdownCell(f.case_id, 200) << " | "
       << MarkdownCell(TrustJudgementLine(t ? t->fp64 : std::nullopt), 200) << " | "
       << MarkdownCell(TrustJudgementLine(t ? t->device_reference : std::nullopt), 200) << " | "
       << MarkdownCell(t ? t->reason : "", 400) << " |\n";
  }
}

// Every failed case, the reference suspects among them, and how to run
// each failing operator again.
void Failures(std::ostringstream& md, const RunModel& run) {
  if (run.failures.empty()) return;
  md << "\n## Failures\n\n| case | error | A/B | message |\n|---|---|---|---|\n";
  for (const FailureRow& f : run.failures) {
    md << "| " << MarkdownCell(f.case_id, 200) << " | " << MarkdownCell(f.error_type.text(), 200)
       << " | " << MarkdownCell(f.AbText(), 300) << " | " << MarkdownCell(f.message, 200) << " |\n";
  }
  ReferenceSuspects(md, run);
  md << "\nTo run a failing operator again by itself:\n\n";
  std::set<std::string> shown;
  for (const FailureRow& f : run.failures) {
    if (shown.insert(f.op).second) md << MarkdownCodeBlock(f.repro, "sh");
  }
}

}  // namespace

Status MarkdownReporter::ReportRun(const RunModel& run) {
  std::ostringstream md;
  Summary(md, run);
  Incomplete(md, run);
  SinceWhen(md, context().extras);
  FailingOperators(md, run, context().extras);
  AgainstBaseline(md, context().extras);
  OperatorsAndPerformance(md, run);
  DeclaredExceptions(md, run);
  Failures(md, run);
  return WriteReportFile((std::filesystem::path(context().run_dir) / "report.md").string(),
                         md.str());
}

}  // namespace opverify
