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
        "shard", "stopped_by_signal", "stopped_by_maxfail", "unassigned_items", "sandbox",
        "compiler_cache", "timeline", "opverify", "started_at"}) {
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
    for (const char* key : {"manifest", "manifest_name", "launcher", "backend", "store",
                            "stopped_by_signal", "stopped_by_maxfail", "opverify", "started_at"}) {
      if (!info.contains(key) && part_info.contains(key)) info[key] = part_info[key];
    }
    ranks += part_info.value("ranks", 0);
    unassigned += part_info.value("unassigned_items", 0);
    from.push_back(fs::absolute(part).lexically_normal().string());
  }
  if (ranks > 0) info["ranks"] = ranks;
  if (info.contains("stopped_by_signal") || info.contains("stopped_by_maxfail"))
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

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_default_logger(opverify::ConsoleLogger("opverify-reduce"));
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
  std::string run_dir, baseline;
  bool allow_missing = false;
  double threshold_pct = 5;
  app.add_option("RUN_DIR", run_dir, "The run folder (with shards/)")->required();
  std::vector<std::string> parts;
  app.add_option("--merge", parts,
                 "Run folders whose shards make up RUN_DIR (the --shard I/N parts of one sweep, "
                 "e.g. a Slurm job array's); RUN_DIR is created, or remade if an earlier merge "
                 "made it")
      ->check(CLI::ExistingDirectory);
  app.add_option("--baseline", baseline, "An earlier run folder to compare with");
  app.add_flag("--allow-missing", allow_missing,
               "With --baseline: an operator of the baseline that this run lacks is listed, not a "
               "regression");
  app.add_option("--perf-threshold", threshold_pct,
                 "Percent change of latency that counts (and the spread must be exceeded too)")
      ->check(opverify::FiniteRange(0, 1e6));
  opverify::PerformanceFlags perf;
  opverify::AddPerformanceFlags(app, &perf);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = opverify::ExitWithSuggestions(app, e);
    return code == 0 ? 0 : 2;
  }
  std::vector<std::string> problems;
  const std::string safe_run_dir = opverify::TerminalSafe(run_dir);
  opverify::RunLock lock;  // held while the reports are written: one writer per run folder
  if (!parts.empty()) {
    std::error_code error;
    fs::create_directories(run_dir, error);
    if (!TakeLock(run_dir, &lock)) return 2;
    if (opverify::Status merged = opverify::MergeShards(run_dir, parts, &problems); !merged.ok()) {
      std::fprintf(stderr, "opverify-reduce: --merge: %s\n",
                   opverify::TerminalSafe(merged.ToString()).c_str());
      return 2;
    }
    if (opverify::Status planned = MergePlans(run_dir, parts); !planned.ok()) {
      std::fprintf(stderr, "opverify-reduce: --merge: %s\n",
                   opverify::TerminalSafe(planned.ToString()).c_str());
      return 2;
    }
  }
  std::error_code not_a_folder;
  if (!fs::is_directory(fs::path(run_dir) / "shards", not_a_folder)) {
    std::fprintf(stderr, "opverify-reduce: %s: not a run folder (no shards/)\n",
                 safe_run_dir.c_str());
    return 2;
  }
  if (!baseline.empty() &&
      !fs::is_regular_file(fs::path(baseline) / "summary.json", not_a_folder)) {
    std::fprintf(stderr, "opverify-reduce: --baseline %s: no summary.json there\n",
                 opverify::TerminalSafe(baseline).c_str());
    return 2;
  }
  if (!lock.held() && !TakeLock(run_dir, &lock)) return 2;
  if (opverify::Status indexed = opverify::WriteResultsIndex(run_dir, &problems); !indexed.ok()) {
    std::fprintf(stderr, "opverify-reduce: results.h5: %s\n",
                 opverify::TerminalSafe(indexed.ToString()).c_str());
    return 2;
  }
  for (const auto& problem : problems) spdlog::warn("{}", problem);
  json run_info = parts.empty() ? PreviousRunInfo(run_dir) : MergedRunInfo(parts);
  run_info["reduced_by"] = "opverify-reduce";
  run_info["reduced_with"] = {{"version", opverify::Version()}, {"commit", opverify::GitCommit()}};
  // The references, the history and the baseline diff are done between the
  // data files and report.md/report.html, which show them.
  int performance = 0;
  std::optional<opverify::Result<opverify::BaselineDiff>> diff;
  std::optional<opverify::VerdictTrend> trend;  // for the console's triage
  const auto extras_step = [&](const opverify::RunModel& run, opverify::ReportExtras* extras) {
    performance = opverify::CheckPerformance(perf, run, extras);
    trend = extras->trend;
    if (performance == 2 || baseline.empty()) return;
    diff = opverify::DiffRuns(run_dir, baseline, threshold_pct / 100);
    if (!diff->ok()) return;
    diff->value().allow_missing = allow_missing;
    extras->baseline = diff->value();
    extras->baseline_dir = baseline;
  };
  opverify::RunModel model;  // for the console's list of failed cases
  opverify::Result<opverify::RunTotals> totals =
      opverify::WriteRunReports(run_dir, run_info, &model, extras_step);
  if (!totals.ok()) {
    std::fprintf(stderr, "opverify-reduce: %s\n",
                 opverify::TerminalSafe(totals.status().ToString()).c_str());
    return 2;
  }
  opverify::PrintDeclaredExceptions(model);
  opverify::PrintFailedCases(model, run_dir);
  opverify::PrintOperatorTriage(model, stdout, trend ? &*trend : nullptr);
  std::printf(
      "%s -> %s\n", opverify::TotalsLine(totals.value(), opverify::ColourWanted(stdout)).c_str(),
      opverify::TerminalSafe(opverify::FileUrl((fs::path(run_dir) / "report.html").string()))
          .c_str());
  const int lost_code = totals->lost > 0 ? 3 : 0;
  if (totals->lost > 0) {
    std::fprintf(stderr,
                 "opverify-reduce: RESULTS LOST: %d of the run's results are unreadable or missing "
                 "(summary.json's problems and incomplete); this run is no pass\n",
                 totals->lost);
  }
  if (performance == 2) return 2;
  if (baseline.empty()) return lost_code != 0 ? lost_code : performance;
  if (!diff->ok()) {
    std::fprintf(stderr, "opverify-reduce: %s\n",
                 opverify::TerminalSafe(diff->status().ToString()).c_str());
    return 2;
  }
  const opverify::BaselineDiff& changes = diff->value();
  const std::string report_path = (fs::path(run_dir) / "baseline_diff.json").string();
  if (opverify::Status written = opverify::WriteReportJson(report_path, changes.ToJson());
      !written.ok()) {
    std::fprintf(stderr, "opverify-reduce: %s\n", written.ToString().c_str());
    return 2;
  }
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
  std::printf("%s -> %s\n", changes.regressed() ? "REGRESSED" : "no regression",
              opverify::TerminalSafe(report_path).c_str());
  if (lost_code != 0) return lost_code;
  return changes.regressed() ? 1 : performance;
}
