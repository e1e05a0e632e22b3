// opverify-reduce: every report of a run folder rebuilt from its HDF5 shards
// alone (after a crash, or to merge runs), and the comparison with an
// earlier run: the release-qualification gate.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <optional>

#include "reduce/baseline_diff.h"
#include "reduce/performance_flags.h"
#include "reduce/report_file.h"
#include "reduce/run_report.h"
#include "runner/common/console_style.h"
#include "runner/common/terminal_log.h"
#include "runner/common/terminal_text.h"
#include "runner/common/user_file.h"
#include "runner/common/version.h"
#include "runner/store/results_index.h"
#include "runner/store/run_info.h"
#include "runner/store/run_lock.h"
#include "runner/store/run_plan.h"
#include "runner/store/shard_merge.h"
#include "runner/usage/usage.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// What the batch recorded of itself (manifest, ranks, timing), when its
// summary is there; the build that ran it ("opverify") too: a re-reduce
// keeps the runner's version, the reducer's is "reduced_with".
json PreviousRunInfo(const fs::path& run_dir) {
  const opverify::Result<std::string> text =
      opverify::ReadUserFile((run_dir / "summary.json").string(), "summary", 1u << 30);
  if (!text.ok()) return json::object();
  json summary = json::parse(text.value(), nullptr, false);
  json info = json::object();
  if (!summary.is_object()) return info;
  for (const char* key :
       {"manifest", "manifest_name", "ranks", "launcher", "backend", "store", "resumed", "timing",
        "part", "shard", "stopped_by_signal", "stopped_by_maxfail", "stopped_by_time_limit",
        "unassigned_items", "sandbox", "compiler_cache", "timeline", "opverify", "started_at",
        "ranks_left"}) {
    if (summary.contains(key)) info[key] = summary[key];
  }
  return info;
}

// What the parts of a merged run recorded: the first part's manifest and
// settings, every part's ranks, and whether a signal stopped any of them.
json MergedRunInfo(const std::vector<std::string>& parts) {
  json info = json::object();
  int ranks = 0, unassigned = 0;
  json from = json::array();
  for (const std::string& part : parts) {
    const json part_info = PreviousRunInfo(part);
    for (const char* key :
         {"manifest", "manifest_name", "launcher", "backend", "store", "stopped_by_signal",
          "stopped_by_maxfail", "stopped_by_time_limit", "opverify", "started_at"}) {
      if (!info.contains(key) && part_info.contains(key)) info[key] = part_info[key];
    }
    const opverify::RunInfo recorded = part_info.get<opverify::RunInfo>();
    ranks += recorded.ranks.value_or(0);
    unassigned += recorded.unassigned_items;
    from.push_back(fs::absolute(part).lexically_normal().string());
    if (part_info.contains("ranks_left") && part_info["ranks_left"].is_array()) {
      for (json left : part_info["ranks_left"]) {  // ranks are numbered per part: say which
        if (left.is_object()) left["part"] = from.back();
        info["ranks_left"].push_back(left);
      }
    }
  }
  if (ranks > 0) info["ranks"] = ranks;
  if (info.contains("stopped_by_signal") || info.contains("stopped_by_maxfail") ||
      info.contains("stopped_by_time_limit") || info.contains("ranks_left"))
    info["unassigned_items"] = unassigned;
  info["merged_from"] = from;
  return info;
}

// Takes the run folder's lock: a live opverify-batch (or another reduce)
// writing there is refused, naming it; prints why and returns false.
bool TakeLock(const std::string& run_dir, opverify::RunLock* lock) {
  std::string broke;
  opverify::Result<opverify::RunLock> taken =
      opverify::RunLock::Acquire(run_dir, "opverify-reduce", &broke);
  if (!taken.ok()) {
    std::fprintf(stderr, "opverify-reduce: %s (its reports are written when it ends)\n",
                 opverify::TerminalSafe(taken.status().message()).c_str());
    return false;
  }
  if (!broke.empty()) spdlog::warn("{}: broke the stale lock of {}", run_dir, broke);
  *lock = std::move(taken).value();
  return true;
}

// The merged run's plan: every part's planned operators (a part without a
// plan adds none).
opverify::Status MergePlans(const std::string& run_dir, const std::vector<std::string>& parts) {
  opverify::RunPlan merged;
  bool any = false;
  for (const std::string& part : parts) {
    opverify::Result<std::optional<opverify::RunPlan>> plan = opverify::ReadRunPlan(part);
    if (!plan.ok()) return plan.status();
    if (!plan.value()) continue;
    any = true;
    for (auto& op : plan.value()->operators) merged.operators.push_back(std::move(op));
  }
  if (!any) return opverify::Status::Ok();
  return opverify::WriteRunPlan(run_dir, merged);
}

// The command line of opverify-reduce.
struct ReduceFlags {
  std::string run_dir, baseline;
  std::vector<std::string> parts;  // --merge
  bool allow_missing = false;
  double threshold_pct = 5;
  opverify::PerformanceFlags perf;
};

// Parses the command line into `flags`. Returns the exit code where the
// program ends here (0 after --help, 2 for bad usage), else nullopt.
std::optional<int> ParseFlags(int argc, char** argv, ReduceFlags* flags) {
  CLI::App app{
      "opverify-reduce: rebuild a run's reports from its HDF5 shards; compare with a baseline run"};
  opverify::DescribeProgram(
      app,
      "  0  reports written, every result the run planned is there (and no regression against "
      "--baseline, every --references bound met)\n"
      "  1  a regression against --baseline (an operator newly failing, slower, or missing), or a "
      "PerformanceError against --references\n"
      "  2  bad usage or input (unreadable references), or the run folder is in use by a live run\n"
      "  3  results lost: a shard, journal or plan unreadable, or fewer results than the run "
      "planned\n"
      "     (the reports are written and say what is missing; 3 wins over 1)");
  app.add_option("RUN_DIR", flags->run_dir, "The run folder (with shards/)")->required();
  app.add_option("--merge", flags->parts,
                 "Run folders whose shards make up RUN_DIR (the --part I/N parts of one sweep, "
                 "e.g. a Slurm job array's); RUN_DIR is created, or remade if an earlier merge "
                 "made it")
      ->check(CLI::ExistingDirectory);
  app.add_option("--baseline", flags->baseline, "An earlier run folder to compare with");
  app.add_flag("--allow-missing", flags->allow_missing,
               "With --baseline: an operator of the baseline that this run lacks is listed, not a "
               "regression");
  app.add_option("--perf-threshold", flags->threshold_pct,
                 "Percent change of latency that counts (and the spread must be exceeded too)")
      ->check(opverify::FiniteRange(0, 1e6));
  opverify::AddPerformanceFlags(app, &flags->perf);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = opverify::ExitWithSuggestions(app, e);
    return code == 0 ? 0 : 2;
  }
  return std::nullopt;
}

// With --merge: RUN_DIR made, locked, and filled with the parts' shards
// and plans. Returns false, having said why, when that fails.
bool MergeParts(const ReduceFlags& flags, opverify::RunLock* lock,
                std::vector<std::string>* problems) {
  std::error_code error;
  fs::create_directories(flags.run_dir, error);
  if (!TakeLock(flags.run_dir, lock)) return false;
  if (opverify::Status merged = opverify::MergeShards(flags.run_dir, flags.parts, problems);
      !merged.ok()) {
    std::fprintf(stderr, "opverify-reduce: --merge: %s\n",
                 opverify::TerminalSafe(merged.ToString()).c_str());
    return false;
  }
  if (opverify::Status planned = MergePlans(flags.run_dir, flags.parts); !planned.ok()) {
    std::fprintf(stderr, "opverify-reduce: --merge: %s\n",
                 opverify::TerminalSafe(planned.ToString()).c_str());
    return false;
  }
  return true;
}

// RUN_DIR ready to reduce: merged (with --merge), checked to be a run
// folder, locked (`lock` is held while the reports are written), its
// results index written (what is unreadable in `problems`). Returns false,
// having said why, when it is not.
bool PrepareRunFolder(const ReduceFlags& flags, opverify::RunLock* lock,
                      std::vector<std::string>* problems) {
  if (!flags.parts.empty() && !MergeParts(flags, lock, problems)) return false;
  std::error_code not_a_folder;
  if (!fs::is_directory(fs::path(flags.run_dir) / "shards", not_a_folder)) {
    std::fprintf(stderr, "opverify-reduce: %s: not a run folder (no shards/)\n",
                 opverify::TerminalSafe(flags.run_dir).c_str());
    return false;
  }
  if (!flags.baseline.empty() &&
      !fs::is_regular_file(fs::path(flags.baseline) / "summary.json", not_a_folder)) {
    std::fprintf(stderr, "opverify-reduce: --baseline %s: no summary.json there\n",
                 opverify::TerminalSafe(flags.baseline).c_str());
    return false;
  }
  if (!lock->held() && !TakeLock(flags.run_dir, lock)) return false;
  if (opverify::Status indexed = opverify::WriteResultsIndex(flags.run_dir, problems);
      !indexed.ok()) {
    std::fprintf(stderr, "opverify-reduce: results.h5: %s\n",
                 opverify::TerminalSafe(indexed.ToString()).c_str());
    return false;
  }
  return true;
}

// What writing the reports found besides the totals.
struct ReduceOutcome {
  int performance = 0;                                           // CheckPerformance's exit code
  std::optional<opverify::Result<opverify::BaselineDiff>> diff;  // with --baseline
  std::optional<opverify::VerdictTrend> trend;                   // for the console's triage
  opverify::RunModel model;  // for the console's list of failed cases
};

// Every report of RUN_DIR written. The references, the history and the
// baseline diff are done between the data files and report.md/report.html,
// which show them.
opverify::Result<opverify::RunTotals> WriteReports(const ReduceFlags& flags,
                                                   ReduceOutcome* outcome) {
  json run_info = flags.parts.empty() ? PreviousRunInfo(flags.run_dir) : MergedRunInfo(flags.parts);
  run_info["reduced_by"] = "opverify-reduce";
  run_info["reduced_with"] = {{"version", opverify::Version()}, {"commit", opverify::GitCommit()}};
  const auto extras_step = [&](const opverify::RunModel& run, opverify::ReportExtras* extras) {
    outcome->performance = opverify::CheckPerformance(flags.perf, run, extras);
    outcome->trend = extras->trend;
    if (outcome->performance == 2 || flags.baseline.empty()) return;
    outcome->diff = opverify::DiffRuns(flags.run_dir, flags.baseline, flags.threshold_pct / 100);
    if (!outcome->diff->ok()) return;
    outcome->diff->value().allow_missing = flags.allow_missing;
    extras->baseline = outcome->diff->value();
    extras->baseline_dir = flags.baseline;
  };
  return opverify::WriteRunReports(flags.run_dir, run_info, &outcome->model, extras_step);
}

// The console's account of the run: waivers, failed cases, the operators'
// triage and the totals line.
void PrintRun(const ReduceOutcome& outcome, const opverify::RunTotals& totals,
              const std::string& run_dir) {
  opverify::PrintDeclaredExceptions(outcome.model);
  opverify::PrintFailedCases(outcome.model, run_dir);
  opverify::PrintOperatorTriage(outcome.model, stdout, outcome.trend ? &*outcome.trend : nullptr);
  std::printf(
      "%s -> %s\n", opverify::TotalsLine(totals, opverify::ColourWanted(stdout)).c_str(),
      opverify::TerminalSafe(opverify::FileUrl((fs::path(run_dir) / "report.html").string()))
          .c_str());
  if (totals.lost > 0) {
    std::fprintf(stderr,
                 "opverify-reduce: RESULTS LOST: %d of the run's results are unreadable or missing "
                 "(summary.json's problems and incomplete); this run is no pass\n",
                 totals.lost);
  }
}

// What changed against the baseline, one line per kind of change.
void PrintChanges(const opverify::BaselineDiff& changes, bool allow_missing) {
  const auto list = [](const char* what, const std::vector<std::string>& names) {
    if (names.empty()) return;
    std::printf("%s:", what);
    for (const auto& n : names) std::printf(" %s", opverify::TerminalSafe(n).c_str());
    std::printf("\n");
  };
  list("newly failing", changes.newly_failing);
  list("reference_suspect (failing, not counted as a regression)", changes.reference_suspect);
  list("fixed", changes.fixed);
  for (const auto* speed : {&changes.slower, &changes.faster}) {
    for (const auto& c : *speed) {
      std::printf("%s: %s %+.1f%% (noise floor %.1f%%: spread %.1f%% at %d repeats, %d shapes)\n",
                  speed == &changes.slower ? "slower" : "faster",
                  opverify::TerminalSafe(c.op).c_str(), (c.ratio - 1) * 100, c.noise_floor * 100,
                  c.spread * 100, c.repeats, c.shapes);
    }
  }
  list("new", changes.added);
  list(allow_missing ? "missing (allowed)" : "missing", changes.missing);
}

// With --baseline: the comparison written to baseline_diff.json and
// printed. Returns the exit code (lost results win over a regression).
int ReportBaseline(const ReduceFlags& flags, const opverify::Result<opverify::BaselineDiff>& diff,
                   int lost_code, int performance) {
  if (!diff.ok()) {
    std::fprintf(stderr, "opverify-reduce: %s\n",
                 opverify::TerminalSafe(diff.status().ToString()).c_str());
    return 2;
  }
  const opverify::BaselineDiff& changes = diff.value();
  const std::string report_path = (fs::path(flags.run_dir) / "baseline_diff.json").string();
  if (opverify::Status written = opverify::WriteReportJson(report_path, changes.ToJson());
      !written.ok()) {
    std::fprintf(stderr, "opverify-reduce: %s\n", written.ToString().c_str());
    return 2;
  }
  PrintChanges(changes, flags.allow_missing);
  std::printf("%s -> %s\n", changes.regressed() ? "REGRESSED" : "no regression",
              opverify::TerminalSafe(report_path).c_str());
  if (lost_code != 0) return lost_code;
  return changes.regressed() ? 1 : performance;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_default_logger(opverify::ConsoleLogger("opverify-reduce"));
  ReduceFlags flags;
  if (const std::optional<int> exit_code = ParseFlags(argc, argv, &flags)) return *exit_code;
  std::vector<std::string> problems;
  opverify::RunLock lock;  // held while the reports are written: one writer per run folder
  if (!PrepareRunFolder(flags, &lock, &problems)) return 2;
  for (const auto& problem : problems) spdlog::warn("{}", problem);
  ReduceOutcome outcome;
  opverify::Result<opverify::RunTotals> totals = WriteReports(flags, &outcome);
  if (!totals.ok()) {
    std::fprintf(stderr, "opverify-reduce: %s\n",
                 opverify::TerminalSafe(totals.status().ToString()).c_str());
    return 2;
  }
  PrintRun(outcome, totals.value(), flags.run_dir);
  const int lost_code = totals->lost > 0 ? 3 : 0;
  if (outcome.performance == 2) return 2;
  if (flags.baseline.empty()) return lost_code != 0 ? lost_code : outcome.performance;
  return ReportBaseline(flags, *outcome.diff, lost_code, outcome.performance);
}
