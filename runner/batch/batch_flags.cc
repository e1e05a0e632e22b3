#include "runner/batch/batch_flags.h"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>

#include "runner/batch/selection.h"
#include "runner/common/terminal_text.h"
#include "runner/usage/usage.h"

namespace opverify {
namespace {

// The flags as given, before they become BatchOptions (ApplyGivenFlags).
struct GivenFlags {
  double timeout = 0;
  double warmup = -1;
  std::string schedule = "cost";
  std::uint64_t max_cases = 0;
  std::uint64_t max_job_cases = 0;
  bool verbose = false;
  bool quiet = false;
  std::string progress = "text";
};

// What runs: the manifest, the run folder, the selection, the part, the
// store, the time limits, the caches, the benchmark.
void AddRunFlags(CLI::App& app, BatchFlags* flags, GivenFlags* given) {
  BatchOptions* options = &flags->options;
  app.add_option("jobs", options->jobs_path, "Job manifest (jobs/*.json)")->required();
  app.add_option("--run-dir", options->run_dir, "Run folder (default: runs/<job>-<UTC time>)");
  app.add_flag("--resume", options->resume, "Run only the cases not already stored in --run-dir");
  app.add_option("--backend", options->backend, "Where implementations run")
      ->check(CLI::IsMember({"auto", "cuda", "npu", "cpu"}));
  AddSelectionFlags(app, options);
  app.add_option("--part,--shard", flags->part,
                 "I/N: only the operators whose position in the manifest (from 0) is I modulo N "
                 "(one of N parts, e.g. a Slurm array task's; opverify-reduce --merge joins them; "
                 "--shard is its old name)");
  CLI::Option* dry_run = app.add_flag("--dry-run", options->dry_run, "Print the work plan and stop");
  app.add_option("--plan-ranks", options->plan_ranks,
                 "With --dry-run: the plan for this many ranks (a node's, say) instead of this "
                 "launch's")
      ->check(CLI::Range(1, 100000))
      ->needs(dry_run);
  app.add_option("--store", flags->store, "Which cases keep golden/actual tensors")
      ->check(CLI::IsMember({"all", "failures", "none"}));
  app.add_option("--timeout", given->timeout, "Per-case timeout in seconds for every operator")
      ->check(Seconds());
  app.add_option("--warmup-timeout", given->warmup,
                 "Seconds each operator may spend compiling and autotuning beyond --timeout "
                 "(a hard cap per operator; default: the manifest's warmup_timeout_s, else 1800)")
      ->check(FiniteRange(0, 604800));
  app.add_option(
      "--cache-dir", options->cache_dir,
      "Persistent Triton/inductor caches, one subfolder per rank (DIR/rank-NNNN), reused by "
      "later runs (default: a cold cache in the run folder); the A/B keeps a fresh one");
  app.add_flag(
      "--no-bench", [options](std::int64_t) { options->bench = false; },
      "Skip the benchmark phase");
  app.add_flag(
      "--require-anchors", options->require_anchors,
      "Refuse (exit 3) an operator whose task file has no task_sha256 anchor in the manifest");
  app.add_option("--freq-check-interval", options->freq_check_interval_s,
                 "Seconds between device clock samples while benchmarking (0: none)")
      ->check(FiniteRange(0, 3600));
}

// The A/B of accuracy failures, and when failures stop the run.
void AddFailureFlags(CLI::App& app, BatchOptions* options) {
  app.add_flag(
      "--no-ab", [options](std::int64_t) { options->ab = false; },
      "Do not re-run accuracy failures (A/B)");
  app.add_option("--max-ab", options->max_ab,
                 "The most A/B re-runs of the whole run, over every rank; an accuracy failure "
                 "beyond them is recorded as A/B \"skipped (budget)\" (default: no limit)")
      ->check(CLI::Range(0, 100000000));
  app.add_flag("--ab-every-case", options->ab_every_case,
               "A/B re-run every accuracy failure (default: an operator's first of each dtype and "
               "failing check; the others inherit its class)");
  CLI::Option* maxfail =
      app.add_option("--maxfail", options->max_failures,
                     "Stop after N failed cases (counted across ranks): start no more work, let "
                     "the cases in hand finish, report them and list the rest as not run (exit 1)")
          ->check(CLI::Range(1, 100000000));
  app.add_option("--time-limit", options->time_limit_s,
                 "Stop after this many seconds, as on SIGTERM: start no more work, cut the cases "
                 "in flight short, write the reports of what was done (exit 1 where anything is "
                 "left); --resume runs the rest")
      ->check(FiniteRange(1, 31536000));
  app.add_flag(
         "-x,--exitfirst", [options](std::int64_t) { options->max_failures = 1; },
         "Stop after the first failed case (--maxfail 1)")
      ->excludes(maxfail);
}

// How the work is planned, how large it may grow, how it is stored.
void AddScheduleFlags(CLI::App& app, BatchOptions* options, GivenFlags* given) {
  app.add_option("--previous", options->previous_run,
                 "An earlier run folder: its timings predict each operator's cost")
      ->check(CLI::ExistingDirectory);
  app.add_option("--schedule", given->schedule,
                 "cost: operators without a time (--previous, else --history's last night) first, "
                 "then the longest expected; "
                 "an operator over half a rank's share of the run split into case chunks over "
                 "several ranks. fifo: the plan before costs (manifest order, or the longest "
                 "first by those times; chunks of --max-cases-per-item only)")
      ->check(CLI::IsMember({"cost", "fifo"}))
      ->capture_default_str();
  app.add_option("--max-cases-per-item", options->max_cases_per_item,
                 "Split sweeps larger than this")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--max-cases", given->max_cases,
                 "The most cases one operator's sweep may make (over the manifest's max_cases; "
                 "default 100000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100000000}));
  app.add_option("--max-job-cases", given->max_job_cases,
                 "The most sweep cases of the whole job (over the manifest's max_job_cases; "
                 "default 1000000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100000000}));
  app.add_flag("--fsync", options->fsync,
               "fsync every stored case (survives a machine crash, not only a killed rank)");
}

// What the console shows while the run goes.
void AddConsoleFlags(CLI::App& app, BatchOptions* options, GivenFlags* given) {
  CLI::Option* verbose_flag =
      app.add_flag("-v,--verbose", given->verbose,
                   "A line per finished case (PASSED/FAILED op/case) and every rank's log");
  app.add_flag("-q,--quiet", given->quiet,
               "Only errors, the failed cases and the totals: no progress line, no warnings")
      ->excludes(verbose_flag);
  app.add_option("--progress", given->progress,
                 "text: a progress line on stderr; jsonl: instead, one JSON object per finished "
                 "case on stderr; jsonl=FILE: the text line, and the objects appended to FILE; "
                 "none: neither")
      ->capture_default_str();
  app.add_option("--progress-interval", options->progress_interval_s,
                 "Off a terminal, the text progress line is printed when it changed, at most "
                 "this often (seconds), and unchanged every 300 s")
      ->check(FiniteRange(0, 86400));
}

// --progress into the options; false (its message printed) when it is none of its forms.
bool ApplyProgress(const std::string& progress, BatchOptions* options) {
  if (progress == "text" || progress == "none") {
    options->progress_text = progress == "text";
  } else if (progress == "jsonl") {
    options->progress_text = false;  // one stream on stderr, not two interleaved
    options->progress_jsonl = "-";
  } else if (progress.rfind("jsonl=", 0) == 0 && progress.size() > 6) {
    options->progress_jsonl = progress.substr(6);
  } else {
    std::fprintf(stderr,
                 "opverify-batch: --progress %s: expected text, jsonl, jsonl=FILE or none\n",
                 TerminalSafe(progress).c_str());
    return false;
  }
  return true;
}

// The parsed flags into BatchOptions; false (its message printed) for a value refused.
bool ApplyGivenFlags(const CLI::App& app, const GivenFlags& given, BatchFlags* flags) {
  BatchOptions& options = flags->options;
  options.store = *ParseStorePolicy(flags->store);
  options.schedule = *ParseSchedulePolicy(given.schedule);
  if (app.count("--part") > 0 && !(options.part = ParseManifestPart(flags->part))) {
    std::fprintf(stderr, "opverify-batch: --part %s: expected I/N with 0 <= I < N\n",
                 flags->part.c_str());
    return false;
  }
  options.verbosity = given.quiet     ? Verbosity::kQuiet
                      : given.verbose ? Verbosity::kVerbose
                                      : Verbosity::kNormal;
  if (!ApplyProgress(given.progress, &options)) return false;
  if (given.quiet) options.progress_text = false;
  if (given.timeout > 0) options.timeout_s = given.timeout;
  if (given.max_cases > 0) options.manifest_limits.operator_cases = given.max_cases;
  if (given.max_job_cases > 0) options.manifest_limits.job_cases = given.max_job_cases;
  if (given.warmup >= 0) options.warmup_timeout_s = given.warmup;
  return true;
}

}  // namespace

std::optional<BatchFlags> ParseBatchFlags(int argc, char** argv, int* exit_code) {
  BatchFlags flags;
  flags.store = "failures";
  GivenFlags given;
  CLI::App app{"opverify-batch: verify and benchmark every operator of a job manifest"};
  DescribeProgram(
      app,
      "  0  every case passed\n  1  a case failed, or the run was stopped early\n"
      "  2  bad usage or input, or a rank could not work and left the run (summary.json's\n"
      "     ranks_left; the others finished and every report was written)\n"
      "  3  --require-anchors: an operator without task_sha256\n"
      "  4  a task file differs from its task_sha256");
  AddRunFlags(app, &flags, &given);
  AddFailureFlags(app, &flags.options);
  AddScheduleFlags(app, &flags.options, &given);
  AddConsoleFlags(app, &flags.options, &given);
  AddSandboxOptions(app, &flags.options.sandbox);
  AddPerformanceFlags(app, &flags.perf);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *exit_code = ExitWithSuggestions(app, e) == 0 ? 0 : 2;
    return std::nullopt;
  }
  if (!ApplyGivenFlags(app, given, &flags)) {
    *exit_code = 2;
    return std::nullopt;
  }
  flags.options.history = flags.perf.history;
  return flags;
}

}  // namespace opverify
