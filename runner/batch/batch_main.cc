// opverify-batch JOBS.json: every operator of a job manifest, one rank per
// accelerator. Under mpirun or srun each rank takes the device of its node-
// local rank; rank 0 also hands out the work and writes the reports. Run
// directly, it is one rank doing everything (the embedded default).
#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include "reduce/history.h"
#include "runner/batch/batch_flags.h"
#include "runner/batch/batch_reports.h"
#include "runner/batch/console.h"
#include "runner/batch/launch.h"
#include "runner/batch/library_bytecode.h"
#include "runner/batch/rank_role.h"
#include "runner/batch/run_folder.h"
#include "runner/batch/selection.h"
#include "runner/batch/static_cases.h"
#include "runner/batch/stored_run.h"
#include "runner/batch/worker.h"
#include "runner/common/closest_names.h"
#include "runner/common/json_text.h"
#include "runner/common/sha256.h"
#include "runner/common/strings.h"
#include "runner/common/terminal_text.h"
#include "runner/manifest/manifest.h"
#include "runner/scheduler/comm.h"
#include "runner/scheduler/work_plan.h"
#include "runner/store/run_lock.h"
#include "runner/store/run_plan.h"
#include "runner/store/shard_writer.h"
#include "runner/verify/compiler_cache.h"
#include "runner/verify/operator_run.h"

namespace fs = std::filesystem;

namespace opverify {
namespace {

// SIGTERM, SIGUSR1 (Slurm's warning before the time limit), SIGINT (Ctrl-C)
// or SIGHUP (the terminal closed): stop handing out work, abandon the cases
// in flight (the executor call polls this flag and kills its executor),
// write the reports of what was stored. --resume runs the rest.
std::atomic<int> g_stop_signal{0};

void OnStopSignal(int signal) { g_stop_signal.store(signal); }

// --time-limit: after `seconds`, the same stop as a signal's, unless one came
// first. The thread sleeps in the background for the rest of the process.
void StartTimeLimit(double seconds) {
  if (seconds <= 0) return;
  std::thread([seconds] {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    int none = 0;
    g_stop_signal.compare_exchange_strong(none, kTimeLimitStop);
  }).detach();
}

void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);
}

// mpirun/srun means MPI (every rank's Comm, its size checked against the
// launcher's); run directly, one rank without MPI (null).
Result<std::unique_ptr<Comm>> StartWorld(const LaunchInfo& launch, int* argc, char*** argv) {
  if (launch.launcher == "none") return std::unique_ptr<Comm>();
  Result<std::unique_ptr<Comm>> made = MakeMpiComm(argc, argv);
  if (!made.ok()) return made.status();
  if (Status world = CheckWorldSize(launch, made.value()->size()); !world.ok()) return world;
  return made;
}

// The manifest's operators this run covers (--part, then the selection:
// what it leaves out goes to *left_out), their task files checked. Every rank checks the same
// files, so all refuse together; rank 0 says why. nullopt: the program ends with *exit_code.
std::optional<JobManifest> LoadJob(BatchOptions& options, int rank, int* exit_code,
                                   nlohmann::json* left_out) {
  Result<JobManifest> loaded = LoadManifest(options.jobs_path, options.manifest_limits);
  if (!loaded.ok()) {
    if (rank == 0)
      std::fprintf(stderr, "opverify-batch: %s\n",
                   TerminalSafe(loaded.status().ToString()).c_str());  // bytes of file names too
    *exit_code = 2;
    return std::nullopt;
  }
  JobManifest job = std::move(loaded).value();
  if (options.part) {
    std::vector<std::string> names;
    for (const OperatorJob& op : job.operators) names.push_back(op.name);
    std::vector<OperatorJob> kept;
    for (int i : SelectOperators(names, "", options.part)) {
      kept.push_back(std::move(job.operators[static_cast<std::size_t>(i)]));
    }
    job.operators = std::move(kept);
  }
  if (Status rerun = ResolveRerunFailed(&options); !rerun.ok()) {
    if (rank == 0)
      std::fprintf(stderr, "opverify-batch: %s\n", TerminalSafe(rerun.ToString()).c_str());
    *exit_code = 2;
    return std::nullopt;
  }
  std::vector<std::string> names;  // what the selection chose from, for its error
  for (const OperatorJob& op : job.operators) names.push_back(op.name);
  SelectJobOperators(&job, options.selection, left_out);
  if (!options.selection.everything() && !options.selection.only_ids && job.operators.empty()) {
    if (rank == 0) {
      const std::size_t shown = std::min<std::size_t>(names.size(), 5);
      std::string some;
      for (std::size_t i = 0; i < shown; ++i) some += (i ? ", " : "") + names[i];
      std::string asked;  // the selection as given: --filter 'a*' --tag 'b'
      const CaseSelection& selection = options.selection;
      for (const auto& [flag, values] :
           {std::pair{"--filter", &selection.filters}, std::pair{"--exclude", &selection.excludes},
            std::pair{"--tag", &selection.tags}, std::pair{"--dtype", &selection.dtypes}}) {
        for (const std::string& value : *values)
          asked += (asked.empty() ? "" : " ") + std::string(flag) + " '" + value + "'";
      }
      std::fprintf(stderr, "opverify-batch: %s matches none of the %zu operators of %s (%s%s)\n",
                   TerminalSafe(asked).c_str(), names.size(), options.jobs_path.c_str(),
                   some.c_str(), names.size() > shown ? ", ..." : "");
      // A mistyped name (not a pattern): the operators it may have meant.
      for (const std::string& filter : selection.filters) {
        if (filter.find_first_of("*?[/") != std::string::npos) continue;
        if (const std::string hint = DidYouMean(ClosestNames(filter, names)); !hint.empty())
          std::fprintf(stderr, "--filter %s: %s\n", TerminalSafe(filter).c_str(),
                       TerminalSafe(hint).c_str());
      }
    }
    *exit_code = 2;
    return std::nullopt;
  }
  if (const std::optional<AnchorProblem> anchor = CheckTaskAnchors(job, options.require_anchors)) {
    if (rank == 0)
      std::fprintf(stderr, "opverify-batch: %s\n", TerminalSafe(anchor->message).c_str());
    *exit_code = anchor->exit_code;
    return std::nullopt;
  }
  return job;
}

// The job as this rank read it, as a SHA-256: what an item id means (each
// operator's name, code, cases, the settings that judge it, its declared
// exceptions and benchmark settings, in order). Every rank must have read the
// same job. `preload` is not in it: it changes when a library is imported,
// never a verdict.
std::string JobFingerprint(const JobManifest& job) {
  Sha256 hash;
  const auto add = [&hash](const std::string& text) {
    hash.Update(text.data(), text.size());
    hash.Update("\0", 1);
  };
  for (const OperatorJob& op : job.operators) {
    add(op.name);
    add(op.code.task_file);
    add(op.code.impl_file);
    add(op.code.impl_name);
    add(JsonText(op.code.override_spec));
    add(op.task_sha256.value_or(""));
    const OperatorConfig& config = op.config;
    add(Printf("%d %d %d %.17g %.17g %d %d %d %d %d %s %d",
               config.non_compute.value_or(false) ? 1 : 0, static_cast<int>(config.standard),
               static_cast<int>(config.precision_mode), config.timeout_s, config.warmup_timeout_s,
               config.lint ? 1 : 0, config.runtime_checks ? 1 : 0, config.ghost_replay ? 1 : 0,
               config.repeat, config.seeds, config.golden_precision.c_str(),
               config.edge_cases ? 1 : 0));
    add(JsonText(AllowancesToJson(config.allow_torch)));  // each exception's op, why, where
    for (const std::string& name : config.library) add(name);
    for (const std::string& folder : config.python_path) add(folder);
    add(JsonText(op.bench.ToJson()));
    for (const nlohmann::json& params : op.cases) add(JsonText(params));
    add(std::to_string(op.cases.size()));
  }
  return hash.HexDigest();
}

// Each operator's expected seconds: the --previous run's; else the --history
// file's last timed night of it (a nightly sweep names the history, not last
// night's folder); else, resuming, the times the run folder itself holds (an
// operator cut short by the stop has its time so far: a lower bound, so it
// still starts early); empty without any (the plan then goes by the sweeps).
std::map<std::string, double> PredictedSeconds(const BatchOptions& options) {
  if (!options.previous_run.empty()) return PreviousSeconds(options.previous_run, "--previous");
  if (!options.history.empty()) {
    std::vector<std::string> warnings;
    Result<std::map<std::string, double>> seconds = HistorySeconds(options.history, &warnings);
    for (const std::string& warning : warnings) spdlog::warn("--history: {}", warning);
    if (!seconds.ok())
      spdlog::warn("--history: {}; the plan does not read it", seconds.status().ToString());
    if (seconds.ok() && !seconds->empty()) {
      spdlog::info("the plan's costs: {} operators' last timed night in {}", seconds->size(),
                   options.history);
      return std::move(seconds).value();
    }
  }
  if (options.resume) return PreviousSeconds(options.run_dir, "--resume");
  return {};
}

// The work items over `ranks` ranks, as --schedule plans them from the
// operators' expected seconds (PredictedSeconds) and their sweeps. An operator with generated
// edge cases is one item: how many there are is known only once its
// executor has loaded it.
std::vector<WorkItem> PlanJob(const JobManifest& job, const BatchOptions& options, int ranks) {
  std::vector<OperatorShape> shapes;
  for (const auto& op : job.operators) {
    OperatorShape shape{op.name, op.config.edge_cases ? 0 : static_cast<int>(op.cases.size()), 0};
    for (const nlohmann::json& params : op.cases) shape.case_weight += CaseWeight(params);
    shapes.push_back(std::move(shape));
  }
  return PlanWork(shapes, PredictedSeconds(options),
                  {options.schedule, ranks, options.max_cases_per_item});
}

// plan.json: what this run promises to store, for the reports and
// opverify-reduce to check the store against. A resumed run keeps the plan
// it started with.
void RecordPlan(const JobManifest& job, const BatchOptions& options) {
  if (options.resume) {
    Result<std::optional<RunPlan>> kept = ReadRunPlan(options.run_dir);
    if (kept.ok() && kept.value()) return;
  }
  RunPlan plan;
  for (const OperatorJob& op : job.operators)
    plan.operators.push_back({op.name, static_cast<int>(op.cases.size())});
  if (Status written = WriteRunPlan(options.run_dir, plan); !written.ok())
    spdlog::error("the run's plan: {} (the reports cannot tell lost results)", written.ToString());
}

// --dry-run: the plan, one line per item, without running any user code: a
// task's own cases counted from its source where it makes the count certain.
void PrintWorkPlan(const JobManifest& job, const std::vector<WorkItem>& items,
                   const std::string& run_dir, int ranks) {
  std::vector<std::string> task_files;
  std::map<std::string, std::size_t> count_of;  // operator -> index in the counts
  for (const OperatorJob& op : job.operators) {
    if (!op.cases.empty() || !op.code.override_spec.is_null()) continue;
    count_of[op.name] = task_files.size();
    task_files.push_back(op.code.task_file);
  }
  Result<std::vector<StaticCaseCount>> counts = CountOwnCases(task_files);
  if (!counts.ok())
    std::fprintf(stderr, "opverify-batch: --dry-run: %s\n", counts.status().ToString().c_str());
  std::printf("%zu operators, %zu work items for %d ranks, run folder %s\n", job.operators.size(),
              items.size(), ranks, run_dir.c_str());
  for (const WorkItem& item : items) {
    const OperatorJob& op = job.operators[static_cast<std::size_t>(item.op_index)];
    const std::size_t sweep =
        item.case_indices.empty() ? op.cases.size() : item.case_indices.size();
    std::string cases = std::to_string(sweep) + " sweep cases";
    if (!op.code.override_spec.is_null() && op.cases.empty()) cases = "1 case";
    if (const auto own = count_of.find(op.name); own != count_of.end()) {
      const StaticCaseCount* count = counts.ok() ? &counts.value()[own->second] : nullptr;
      cases = count != nullptr && count->count ? "its own cases: " + std::to_string(*count->count)
                                               : "its own cases, counted when it runs" +
                                                     (count != nullptr ? ": " + count->why : "");
    }
    if (op.config.edge_cases) cases += ", then its generated edge cases";
    const std::string chunk =
        item.chunks > 1 ? Printf(" chunk %d of %d", item.chunk + 1, item.chunks) : "";
    std::printf("  item %d: %s%s (%s)%s\n", item.id, op.name.c_str(), chunk.c_str(), cases.c_str(),
                item.expected_s > 0 ? Printf(", expected %.1f s", item.expected_s).c_str() : "");
  }
}

// This rank's worker: its cache folders and log, no device chosen yet.
// `run_cache` is the rank's folder in the run (the A/B's fresh caches go
// there), `cache` the one its executors compile into.
WorkerSetup MakeWorkerSetup(const JobManifest& job, const BatchOptions& options, int rank,
                            const std::string& run_cache, const std::string& cache) {
  WorkerSetup setup;
  setup.job = &job;
  setup.options = &options;
  setup.rank = rank;
  setup.cache_dir = (fs::path(cache) / "triton").string();
  setup.ab_cache_parent = (fs::path(run_cache) / "ab").string();
  setup.run.backend = options.backend;
  setup.run.executor.log_path =
      (fs::path(options.run_dir) / "logs" / Printf("rank-%04d.executor.log", rank)).string();
  setup.run.executor.env = CompilerCacheEnvironment(cache);
  setup.run.executor.sandbox = options.sandbox;
  return setup;
}

// The declared libraries carried as source, compiled to bytecode before the
// node's executors import them (library_bytecode.h); a failure costs only time.
void CompileLibraries(const JobManifest& job, const std::string& run_dir, int rank) {
  std::vector<std::string> sources = LibrarySources(job);
  for (std::string& runtime : RuntimeSources()) sources.push_back(std::move(runtime));
  const std::string log = (fs::path(run_dir) / "logs" / Printf("rank-%04d.bytecode.log", rank)).string();
  const CompiledSources compiled = CompileLibrarySources(sources, DefaultExecutorProgram(), log);
  if (!compiled.ran) return;
  if (compiled.ok) {
    spdlog::info("rank {}: the libraries' and the runtime's sources compiled to bytecode ({} folders, "
                 "{:.1f} s)", rank, sources.size(), compiled.seconds);
  } else {
    spdlog::warn("rank {}: the libraries' and the runtime's sources were not all compiled to bytecode "
                 "({}); executors compile what is missing as they import it", rank, compiled.detail);
  }
}

// Shows this rank's executors the device of its node-local rank.
void BindDevice(const LaunchInfo& launch, const std::string& backend, int rank,
                WorkerSetup* setup) {
  const LocalDevices devices = DetectLocalDevices(backend);
  if (devices.visible_variable.empty()) return;
  const char* inherited = std::getenv(devices.visible_variable.c_str());
  const std::optional<std::string> device = DeviceForRank(
      launch.local_rank, inherited ? std::optional<std::string>(inherited) : std::nullopt,
      devices.count);
  if (device) setup->run.executor.env.emplace_back(devices.visible_variable, *device);
  spdlog::info("rank {}: local rank {}, {}={}", rank, launch.local_rank, devices.visible_variable,
               device ? *device : (inherited ? inherited : "(all)"));
}

// --list, or a --rerun-failed whose run had no failure: the program ends
// here, with this exit code; nullopt: the run goes on.
std::optional<int> EndsBeforeRun(const JobManifest& job, const BatchOptions& options, int rank) {
  if (options.list) return rank == 0 ? ListSelectedCases(job, options) : 0;
  if (options.selection.only_ids && options.selection.only_ids->empty()) {
    if (rank == 0)
      std::printf("--rerun-failed %s: no case failed there\n", options.rerun_failed.c_str());
    return 0;
  }
  return std::nullopt;
}

// The progress streams (none for --dry-run): rank 0's progress writes the
// JSON lines, so another rank drops them. Opened before the run folder is
// made: a --progress file that cannot be opened leaves nothing behind.
Result<ProgressStreams> OpenConsole(const BatchOptions& options, int rank) {
  Result<ProgressStreams> console =
      options.dry_run ? Result<ProgressStreams>(ProgressStreams{}) : OpenProgress(options);
  if (console.ok() && rank != 0) {
    console->jsonl_file.reset();
    console->output.jsonl = nullptr;
  }
  return console;
}

// The sandbox checked and this rank's folder in the run made: that folder
// (the rank's cache in the run), or why the run cannot go on (exit 2, the
// reason printed: the sandbox's by rank 0, as every rank finds the same).
Result<std::string> PrepareRank(BatchOptions& options, const LaunchInfo& launch, int rank) {
  if (!options.sandbox.memory_bytes)
    options.sandbox.memory_bytes = DefaultMemoryLimit(launch.local_size);
  if (Result<SandboxChoice> sandbox =
          ChooseSandbox(options.sandbox.mode, SandboxHelperBeside(DefaultExecutorProgram()));
      !sandbox.ok()) {
    if (rank == 0)
      std::fprintf(stderr, "opverify-batch: %s\n", sandbox.status().ToString().c_str());
    return sandbox.status();
  }
  Result<std::string> prepared = PrepareRankFolder(options.run_dir, rank, options.verbosity);
  if (!prepared.ok()) {
    std::fprintf(stderr, "opverify-batch: %s\n",
                 TerminalSafe(prepared.status().ToString()).c_str());
  }
  return prepared;
}

// Rank 0 writes what the run promises (plan.json) and what its selection
// left out (selection.json).
void RecordRun(const JobManifest& job, const BatchOptions& options,
               const nlohmann::json& left_out) {
  RecordPlan(job, options);
  if (Status written = WriteSelectionFile(options.run_dir, job, options.selection, left_out);
      !written.ok()) {
    spdlog::error("{}", written.ToString());
  }
}

// This rank's share of the work: its worker set up (device, resumed state,
// shard), the items run as the coordinator hands them out; then rank 0
// writes the reports. The program's exit code.
int RunRankWork(Comm* world, const BatchFlags& flags, const JobManifest& job,
                const LaunchInfo& launch, const std::vector<WorkItem>& items, WorkerSetup& setup,
                ProgressStreams& console) {
  const BatchOptions& options = flags.options;
  const int rank = setup.rank;
  const int size = world ? world->size() : 1;
  BindDevice(launch, options.backend, rank, &setup);
  // A rank that cannot work leaves so that the others are not left waiting for it.
  if (options.resume && !LoadResumeState(options.run_dir, &setup))
    return AbandonRank(world, "--resume: the run's stored results cannot be read", 2);
  Result<std::unique_ptr<ShardWriter>> shard =
      ShardWriter::Create(options.run_dir, rank, options.store,
                          options.fsync ? Durability::kMachineCrash : Durability::kProcessCrash);
  if (!shard.ok()) {
    spdlog::critical("{}", shard.status().ToString());
    return AbandonRank(world, "its shard: " + shard.status().ToString(), 2);
  }
  setup.shard = shard.value().get();
  ExecutorPool pool;
  setup.run.pool = &pool;
  setup.run.executor.stop = &g_stop_signal;
  CoordinatorChannel channel(/*await_count=*/options.max_failures > 0);
  setup.channel = &channel;
  InstallStopHandlers();
  StartTimeLimit(options.time_limit_s);
  const RankOutcome outcome = RunRank(
      world, items,
      [&](const WorkItem& item, const std::function<void(const nlohmann::json&)>& report) {
        return RunWorkItem(item, setup, report);
      },
      CoordinatorLimits{&g_stop_signal, options.max_failures, options.max_ab}, &channel,
      PlanProgress(job, items, options, setup.done), console.output);
  const int stopped_by = g_stop_signal.load();  // what ended the work, not what comes later
  pool.DiscardSpares();   // no operator is left for them, and the reports want the cores
  shard.value().reset();  // close this rank's shard before anyone reads it
  if (world) world->Barrier();
  if (rank != 0) return 0;
  return WriteBatchReports(flags, job.name, launch, size, outcome, stopped_by);
}

int Run(int argc, char** argv) {
  int exit_code = 0;
  std::optional<BatchFlags> flags = ParseBatchFlags(argc, argv, &exit_code);
  if (!flags) return exit_code;
  BatchOptions& options = flags->options;
  const LaunchInfo launch = DetectLaunch([](const char* name) { return std::getenv(name); });
  Result<std::unique_ptr<Comm>> started = StartWorld(launch, &argc, &argv);
  if (!started.ok()) {
    std::fprintf(stderr, "opverify-batch: %s\n", started.status().ToString().c_str());
    return 2;
  }
  const std::unique_ptr<Comm> world = std::move(started).value();
  const int rank = world ? world->rank() : 0;
  const int size = world ? world->size() : 1;
  nlohmann::json left_out = nlohmann::json::array();
  // A rank that ends here says so (EndBeforeRun): the others do not wait for it.
  std::optional<JobManifest> job = LoadJob(options, rank, &exit_code, &left_out);
  if (!job) {
    EndBeforeRun(world.get(), Printf("its manifest, --rerun-failed or selection was refused "
                                     "(exit %d; rank 0 says why when it refuses them too)",
                                     exit_code));
    return exit_code;
  }
  if (std::optional<int> ended = EndsBeforeRun(*job, options, rank)) {
    EndBeforeRun(world.get(), "it had nothing to run (--list, or no failed case to run again)");
    return *ended;
  }
  Result<ProgressStreams> console = OpenConsole(options, rank);
  if (!console.ok()) {
    if (rank == 0)
      std::fprintf(stderr, "opverify-batch: %s\n", console.status().ToString().c_str());
    EndBeforeRun(world.get(), console.status().ToString());
    return 2;
  }
  RunLock lock;  // rank 0's, held until the reports are written
  if (!NegotiateRunDir(world.get(), job->name, JobFingerprint(*job), &options, &lock)) return 2;
  const std::vector<WorkItem> items =
      rank == 0 ? PlanJob(*job, options, options.plan_ranks > 0 ? options.plan_ranks : size)
                : std::vector<WorkItem>{};
  if (options.dry_run) {
    if (rank == 0)
      PrintWorkPlan(*job, items, options.run_dir, options.plan_ranks > 0 ? options.plan_ranks : size);
    return 0;
  }
  const Result<std::string> run_cache = PrepareRank(options, launch, rank);
  if (!run_cache.ok()) return AbandonRank(world.get(), run_cache.status().ToString(), 2);
  const std::string cache = RankCacheFolder(options, rank, run_cache.value());
  if (rank == 0) RecordRun(*job, options, left_out);
  spdlog::info("opverify-batch {}: rank {} of {} ({}), run folder {}, compiler cache {}",
               options.jobs_path, rank, size, launch.launcher, options.run_dir, cache);
  WorkerSetup setup = MakeWorkerSetup(*job, options, rank, run_cache.value(), cache);
  if (launch.local_rank == 0) CompileLibraries(*job, options.run_dir, rank);
  return RunRankWork(world.get(), *flags, *job, launch, items, setup, console.value());
}

}  // namespace
}  // namespace opverify

int main(int argc, char** argv) { return opverify::Run(argc, argv); }
