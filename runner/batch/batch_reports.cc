#include "runner/batch/batch_reports.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>
#include <vector>

#include "reduce/run_report.h"
#include "runner/common/console_style.h"
#include "runner/common/strings.h"
#include "runner/common/terminal_text.h"
#include "runner/common/version.h"
#include "runner/executor/executor_client.h"
#include "runner/process/sandbox.h"
#include "runner/process/subprocess.h"
#include "runner/store/results_index.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace opverify {
namespace {

// Why the run stopped early, as the log says it: the signal's name, or
// "--time-limit".
std::string StopCause(int stop_signal) {
  return stop_signal == kTimeLimitStop ? "--time-limit" : SignalName(stop_signal);
}

// When the run started, UTC ("2026-12-03T01:40:18Z"): the history's night.
std::string StartedAt(const RankOutcome& outcome) {
  const double wall_s = outcome.timing.value("run_wall_s", 0.0);
  const std::time_t started = std::time(nullptr) - static_cast<std::time_t>(wall_s);
  std::tm utc{};
  gmtime_r(&started, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// results.h5, the index of every rank's shard; its problems are warned about.
void IndexResults(const std::string& run_dir) {
  std::vector<std::string> problems;
  if (Status indexed = WriteResultsIndex(run_dir, &problems); !indexed.ok()) {
    spdlog::error("results.h5: {}", indexed.ToString());
  }
  for (const std::string& problem : problems) spdlog::warn("{}", problem);
}

// summary.json's account of the run itself: manifest, ranks, backend,
// timing, sandbox, compiler cache, and how it was stopped early.
json RunInfoJson(const BatchFlags& flags, const std::string& job_name, const LaunchInfo& launch,
                 int ranks, const RankOutcome& outcome, int stop_signal) {
  const BatchOptions& options = flags.options;
  json run_info = {{"manifest", fs::absolute(options.jobs_path).string()},
                   {"manifest_name", job_name},
                   {"ranks", ranks},
                   {"launcher", launch.launcher},
                   {"backend", options.backend},
                   {"store", flags.store},
                   {"resumed", options.resume},
                   {"timing", outcome.timing},
                   {"timeline", outcome.timeline},
                   {"started_at", StartedAt(outcome)},
                   {"opverify", {{"version", Version()}, {"commit", GitCommit()}}}};
  if (options.part) run_info["part"] = flags.part;
  if (Result<SandboxChoice> sandbox =
          ChooseSandbox(options.sandbox.mode, SandboxHelperBeside(DefaultExecutorProgram()));
      sandbox.ok()) {
    run_info["sandbox"] = {{"mode", SandboxModeName(sandbox->mode)},
                           {"reason", sandbox->reason},
                           {"memory_limit_bytes", options.sandbox.memory_bytes.value_or(0)},
                           {"log_cap_bytes", options.sandbox.log_cap_bytes}};
  }
  // Where the executors compiled: a persistent --cache-dir (reused, so its
  // compile time is not a cold start's) or each rank's cold one in the run.
  run_info["compiler_cache"] = {
      {"persistent", !options.cache_dir.empty()},
      {"dir", options.cache_dir.empty() ? (fs::path(options.run_dir) / "cache").string()
                                        : fs::absolute(options.cache_dir).string()}};
  if (stop_signal == kTimeLimitStop) {
    run_info["stopped_by_time_limit"] = {{"seconds", options.time_limit_s}};
  } else if (stop_signal != 0) {
    run_info["stopped_by_signal"] = SignalName(stop_signal);
  }
  if (stop_signal != 0) {
    run_info["unassigned_items"] = outcome.unassigned;
    spdlog::warn(
        "stopped by {}: {} work items not started, the items in flight cut short; "
        "the reports cover what was done; --resume runs the rest",
        StopCause(stop_signal), outcome.unassigned);
  }
  if (outcome.max_failures_reached) {
    run_info["stopped_by_maxfail"] = {{"max_failures", options.max_failures}};
    run_info["unassigned_items"] = outcome.unassigned;
  }
  if (!outcome.ranks_left.empty()) {  // each already logged by the coordinator
    run_info["ranks_left"] = outcome.ranks_left;
    run_info["unassigned_items"] = outcome.unassigned;
  }
  return run_info;
}

// The last line's note on a run stopped early; empty for a whole run.
std::string StoppedNote(const BatchOptions& options, const RankOutcome& outcome, int stop_signal) {
  if (stop_signal != 0) {
    return Printf(" (stopped by %s: %d work items not started; --resume runs the rest)",
                  StopCause(stop_signal).c_str(), outcome.unassigned);
  }
  if (outcome.max_failures_reached) {
    return Printf(
        " (stopped after --maxfail %d: %d work items not started; --resume runs the rest)",
        options.max_failures, outcome.unassigned);
  }
  if (!outcome.ranks_left.empty()) {
    int lost = 0;
    for (const RankLeft& left : outcome.ranks_left) lost += left.lost_item ? 1 : 0;
    return Printf(
        " (%zu %s left the run early: %d work items lost, %d not started (summary.json's "
        "ranks_left); --resume runs the rest)",
        outcome.ranks_left.size(), outcome.ranks_left.size() == 1 ? "rank" : "ranks", lost,
        outcome.unassigned);
  }
  return "";
}

// The console's end of the run: declared exceptions, failed and not-run
// cases, the operators' triage (not with -q), then the totals line, shown
// with -q too, with the report a person opens next as a link.
void PrintRunEnd(const BatchOptions& options, const RunModel& model, const RunTotals& totals,
                 const std::optional<VerdictTrend>& trend, const std::string& stopped) {
  PrintDeclaredExceptions(model);
  PrintFailedCases(model, options.run_dir);
  PrintNotRunCases(model);
  if (options.verbosity != Verbosity::kQuiet)
    PrintOperatorTriage(model, stdout, trend ? &*trend : nullptr);
  std::printf("%s%s -> %s\n", TotalsLine(totals, ColourWanted(stdout)).c_str(), stopped.c_str(),
              TerminalSafe(FileUrl((fs::path(options.run_dir) / "report.html").string())).c_str());
  std::fflush(stdout);
  if (!model.problems.empty()) {
    spdlog::error(
        "{} of the run's stored results are unreadable (summary.json's problems); --resume runs "
        "them again",
        model.problems.size());
  }
  if (model.incomplete.empty()) return;
  if (stopped.empty()) {
    spdlog::error(
        "{} operators have results missing (summary.json's incomplete); --resume runs what is "
        "missing",
        model.incomplete.size());
  } else {  // the stop said why: what it left is listed, not lost
    spdlog::warn(
        "{} operators not finished when the run stopped (summary.json's incomplete and "
        "not_run); --resume runs them",
        model.incomplete.size());
  }
}

}  // namespace

int WriteBatchReports(const BatchFlags& flags, const std::string& job_name,
                      const LaunchInfo& launch, int ranks, const RankOutcome& outcome,
                      int stop_signal) {
  const BatchOptions& options = flags.options;
  IndexResults(options.run_dir);
  const json run_info = RunInfoJson(flags, job_name, launch, ranks, outcome, stop_signal);
  RunModel model;
  int performance = 0;  // CheckPerformance's code: 1 a bound violated, 2 a file it could not use
  std::optional<VerdictTrend> trend;
  ExtrasStep extras;
  if (!flags.perf.references.empty() || !flags.perf.history.empty()) {
    extras = [&](const RunModel& run, ReportExtras* more) {
      performance = CheckPerformance(flags.perf, run, more);
      trend = more->trend;
    };
  }
  Result<RunTotals> totals = WriteRunReports(options.run_dir, run_info, &model, extras);
  if (!totals.ok()) {
    spdlog::error("reports: {}", totals.status().ToString());
    return 2;
  }
  PrintRunEnd(options, model, totals.value(), trend, StoppedNote(options, outcome, stop_signal));
  if (!outcome.healthy || performance == 2) return 2;
  if (performance == 1) return 1;
  if (stop_signal != 0 || outcome.max_failures_reached) return 1;  // not every case ran
  return totals->failed == 0 && totals->cases > 0 && totals->lost == 0 ? 0 : 1;
}

}  // namespace opverify
