// What `opverify-batch` was asked to do.
#pragma once

#include <optional>
#include <string>

#include "runner/cases/selection.h"
#include "runner/manifest/manifest.h"
#include "runner/process/sandbox.h"
#include "runner/scheduler/work_plan.h"
#include "runner/store/shard_writer.h"

namespace opverify {

// How much the console says: -q (errors, the failed cases and the totals),
// the default (also the progress and warnings), -v (also each case and the
// info log of every rank).
enum class Verbosity { kQuiet, kNormal, kVerbose };

struct BatchOptions {
  std::string jobs_path;
  std::string run_dir;           // default: runs/<manifest name>-<UTC timestamp>
  bool resume = false;           // run only cases not journaled in run_dir
  std::string backend = "auto";  // auto, cuda, npu, cpu
  CaseSelection selection;       // --filter, --exclude, --tag, --dtype, --rerun-failed
  std::string rerun_failed;      // --rerun-failed: the earlier run folder; empty: none
  bool list = false;             // --list: print the selected case ids and stop
  std::optional<ManifestPart> part;  // --part I/N: one part of the manifest's operators
  bool dry_run = false;
  int plan_ranks = 0;  // --plan-ranks (with --dry-run): plan for this many ranks; 0: the launch's
  StorePolicy store = StorePolicy::kFailures;
  std::optional<double> timeout_s;  // overrides every operator's OperatorConfig::timeout_s
  std::optional<double>
      warmup_timeout_s;  // overrides every operator's OperatorConfig::warmup_timeout_s
  // --cache-dir: persistent compiler caches, DIR/rank-NNNN per rank (in
  // DIR/part-I-of-N/ with --part), reused across runs; empty: a cold cache
  // in the run folder. The A/B's fresh-cache runs stay in the run folder.
  std::string cache_dir;
  bool bench = true;
  double freq_check_interval_s = 1.0;  // device clock samples during the benchmark (0: none)
  Verbosity verbosity = Verbosity::kNormal;
  // --progress: the text progress (on stderr; off with -q or a JSONL stream
  // on stderr) and where one JSON object per finished case goes: "" none,
  // "-" stderr, else a file appended to.
  bool progress_text = true;
  std::string progress_jsonl;
  double progress_interval_s =
      5.0;         // --progress-interval: off a terminal, the most often a line is printed
  bool ab = true;  // A/B re-run of accuracy failures
  // By default an operator's first accuracy failure of each kind (dtype and
  // failing check) is re-run and the others of that kind inherit its class;
  // --ab-every-case re-runs each one.
  bool ab_every_case = false;
  int max_ab = -1;  // --max-ab: the A/B re-runs of the whole run (-1: no limit)
  // --maxfail N / -x (1): stop handing out work once N cases failed (0: never);
  // the cases in hand finish, the rest are reported as not run.
  int max_failures = 0;
  // --time-limit: stop this many seconds after the start, as on SIGTERM (a
  // night's window): the items in flight are cut short, the reports cover
  // what was done, --resume runs the rest (0: no limit).
  double time_limit_s = 0;
  std::string previous_run;     // a run folder whose timings predict each operator's cost
  // --history FILE: where no --previous is named, its latest seconds of each
  // operator predict the cost (the line this run appends comes after the plan).
  std::string history;
  int max_cases_per_item = 64;  // sweeps larger than this are split across ranks
  // --schedule: cost (predicted costs, new operators first, long ones split
  // over ranks) or fifo (the plan before costs, kept as a baseline).
  SchedulePolicy schedule = SchedulePolicy::kCost;
  bool require_anchors =
      false;  // exit 3 for an operator without task_sha256 (a changed one is always exit 4)
  bool fsync = false;  // survive a machine crash too (two fsyncs per case), not only SIGKILL
  ManifestLimits manifest_limits;  // --max-cases, --max-job-cases
  // --sandbox, --memory-limit (default: a share of the node), --executor-log-cap
  SandboxSettings sandbox;
};

}  // namespace opverify
