// opverify-batch JOBS.json: every operator of a job manifest, one rank per
// accelerator. Under mpirun or srun each rank takes the device of its node-
// local rank; rank 0 also hands out the work and writes the reports. Run
// directly, it is one rank doing everything (the embedded default).
#include <fnmatch.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <thread>

#include "runner/batch/batch_options.h"
#include "runner/batch/comm.h"
#include "runner/batch/coordinator.h"
#include "runner/batch/launch.h"
#include "runner/batch/progress.h"
#include "reduce/run_report.h"
#include "runner/batch/work_plan.h"
#include "runner/batch/worker.h"
#include "runner/common/strings.h"
#include "runner/manifest/manifest.h"
#include "runner/process/subprocess.h"
#include "runner/store/results_index.h"
#include "runner/store/run_records.h"
#include "runner/store/shard_writer.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace opverify {
namespace {

// SIGTERM or SIGUSR1 (Slurm's warning before the time limit): stop handing
// out work, end the items in flight after their current case, write the
// reports of what was done. --resume runs the rest.
std::atomic<int> g_stop_signal{0};

void OnStopSignal(int signal) { g_stop_signal.store(signal); }

void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
}

constexpr int kTagConfig = 100;  // rank 0 -> every rank: the run folder

std::string DefaultRunDir(const std::string& manifest_name) {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", std::gmtime(&now));
  return (fs::path("runs") / (manifest_name + "-" + stamp)).string();
}

// Each operator's wall time in an earlier run, from its stored cases.
std::map<std::string, double> PreviousSeconds(const std::string& run_dir) {
  std::map<std::string, double> seconds;
  if (run_dir.empty()) return seconds;
  std::vector<std::string> problems;
  Result<std::vector<CaseRecord>> records = ReadRunRecords(run_dir, &problems);
  if (!records.ok()) {
    spdlog::warn("--previous {}: {}; keeping manifest order", run_dir, records.status().ToString());
    return seconds;
  }
  for (const CaseRecord& r : records.value()) seconds[r.op_name] += r.timings.value("wall_ms", 0.0) / 1e3;
  return seconds;
}

void SetUpLogging(const std::string& run_dir, int rank, bool verbose) {
  std::vector<spdlog::sink_ptr> sinks;
  sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(
      Printf("%s/logs/rank-%04d.log", run_dir.c_str(), rank), false));
  auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  // Rank 0 shows warnings (the progress line is its voice); others stay quiet.
  console->set_level(verbose ? spdlog::level::info : (rank == 0 ? spdlog::level::warn : spdlog::level::err));
  sinks.push_back(console);
  auto logger = std::make_shared<spdlog::logger>(Printf("rank-%04d", rank), sinks.begin(), sinks.end());
  logger->set_level(spdlog::level::info);
  logger->flush_on(spdlog::level::info);
  logger->set_pattern(Printf("[%%Y-%%m-%%d %%H:%%M:%%S.%%e] [rank %d] [%%l] %%v", rank));
  spdlog::set_default_logger(logger);
}

int Run(int argc, char** argv) {
  BatchOptions options;
  std::string store = "failures";
  double timeout = 0;
  CLI::App app{"opverify-batch: verify and benchmark every operator of a job manifest"};
  app.add_option("jobs", options.jobs_path, "Job manifest (jobs/*.json)")->required();
  app.add_option("--run-dir", options.run_dir, "Run folder (default: runs/<job>-<UTC time>)");
  app.add_flag("--resume", options.resume, "Run only the cases not already stored in --run-dir");
  app.add_option("--backend", options.backend, "Where implementations run")
      ->check(CLI::IsMember({"auto", "cuda", "npu", "cpu"}));
  app.add_option("--filter", options.filter, "Only operators whose name matches this glob");
  std::string shard_text;
  app.add_option("--shard", shard_text,
                 "I/N: only the operators whose position in the manifest (from 0) is I modulo N "
                 "(one of N parts, e.g. a Slurm array task's; opverify-reduce --merge joins them)");
  app.add_flag("--dry-run", options.dry_run, "Print the work plan and stop");
  app.add_option("--store", store, "Which cases keep golden/actual tensors")
      ->check(CLI::IsMember({"all", "failures", "none"}));
  app.add_option("--timeout", timeout, "Per-case timeout in seconds for every operator")->check(CLI::PositiveNumber);
  app.add_flag("--no-bench", [&](std::int64_t) { options.bench = false; }, "Skip the benchmark phase");
  app.add_flag("--require-anchors", options.require_anchors,
               "Refuse (exit 3) an operator whose task file has no task_sha256 anchor in the manifest");
  app.add_option("--freq-check-interval", options.freq_check_interval_s,
                 "Seconds between device clock samples while benchmarking (0: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--no-ab", [&](std::int64_t) { options.ab = false; }, "Do not re-run accuracy failures (A/B)");
  app.add_option("--previous", options.previous_run, "An earlier run folder: its timings order the work");
  app.add_option("--max-cases-per-item", options.max_cases_per_item, "Split sweeps larger than this")
      ->check(CLI::PositiveNumber);
  app.add_flag("--fsync", options.fsync, "fsync every stored case (survives a machine crash, not only a killed rank)");
  app.add_flag("-v,--verbose", options.verbose, "Log every case");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  options.store = *ParseStorePolicy(store);
  if (!shard_text.empty() && !(options.shard = ParseShard(shard_text))) {
    std::fprintf(stderr, "opverify-batch: --shard %s: expected I/N with 0 <= I < N\n",
                 shard_text.c_str());
    return 2;
  }
  if (timeout > 0) options.timeout_s = timeout;

  // Launch: mpirun/srun means MPI; run directly, one rank without MPI.
  const LaunchInfo launch = DetectLaunch([](const char* name) { return std::getenv(name); });
  std::unique_ptr<Comm> mpi;
  int rank = 0, size = 1;
  if (launch.launcher != "none") {
    Result<std::unique_ptr<Comm>> made = MakeMpiComm(&argc, &argv);
    if (!made.ok()) {
      std::fprintf(stderr, "opverify-batch: %s\n", made.status().ToString().c_str());
      return 2;
    }
    mpi = std::move(made).value();
    rank = mpi->rank();
    size = mpi->size();
    if (Status world = CheckWorldSize(launch, size); !world.ok()) {
      std::fprintf(stderr, "opverify-batch: %s\n", world.ToString().c_str());
      return 2;
    }
  }

  Result<JobManifest> loaded = LoadManifest(options.jobs_path);
  if (!loaded.ok()) {
    if (rank == 0) std::fprintf(stderr, "opverify-batch: %s\n", loaded.status().ToString().c_str());
    return 2;
  }
  JobManifest job = std::move(loaded).value();
  if (!options.filter.empty() || options.shard) {
    std::vector<OperatorJob> kept;
    for (std::size_t i = 0; i < job.operators.size(); ++i) {
      OperatorJob& op = job.operators[i];
      if (options.shard && !InShard(static_cast<int>(i), *options.shard)) continue;
      if (options.filter.empty() || fnmatch(options.filter.c_str(), op.name.c_str(), 0) == 0) {
        kept.push_back(std::move(op));
      }
    }
    job.operators = std::move(kept);
  }

  // Every rank checks the same files, so all refuse together.
  if (const std::optional<AnchorProblem> anchor = CheckTaskAnchors(job, options.require_anchors)) {
    if (rank == 0) std::fprintf(stderr, "opverify-batch: %s\n", anchor->message.c_str());
    return anchor->exit_code;
  }

  // Rank 0 names the run folder (and may refuse it); everyone follows.
  std::error_code ec;
  bool refused = false;
  if (rank == 0) {
    if (options.run_dir.empty()) options.run_dir = DefaultRunDir(job.name.empty() ? "job" : job.name);
    options.run_dir = fs::absolute(options.run_dir).string();
    if (!options.resume && !options.dry_run && fs::exists(fs::path(options.run_dir) / "shards", ec)) {
      std::fprintf(stderr, "opverify-batch: %s already holds a run; use --resume to finish it, or another --run-dir\n",
                   options.run_dir.c_str());
      refused = true;
    }
    for (int r = 1; r < size; ++r) mpi->Send(r, kTagConfig, json({{"run_dir", options.run_dir}, {"refused", refused}}).dump());
  } else {
    std::optional<Message> config;
    while (!(config = mpi->Receive(1.0)) || config->tag != kTagConfig) {
    }
    const json parsed = json::parse(config->payload);
    options.run_dir = parsed["run_dir"].get<std::string>();
    refused = parsed["refused"].get<bool>();
  }
  if (refused) return 2;

  std::vector<OperatorShape> shapes;
  // An operator with generated edge cases is one item: how many there are is
  // known only once its executor has loaded it.
  for (const auto& op : job.operators) {
    shapes.push_back({op.name, op.edge_cases ? 0 : static_cast<int>(op.cases.size())});
  }
  const std::vector<WorkItem> items =
      rank == 0 ? PlanWork(shapes, PreviousSeconds(options.previous_run), options.max_cases_per_item)
                : std::vector<WorkItem>{};
  if (options.dry_run) {
    if (rank == 0) {
      std::printf("%zu operators, %zu work items, run folder %s\n", job.operators.size(), items.size(),
                  options.run_dir.c_str());
      for (const WorkItem& item : items) {
        const OperatorJob& op = job.operators[static_cast<std::size_t>(item.op_index)];
        std::printf("  item %d: %s (%s)%s\n", item.id, op.name.c_str(),
                    op.cases.empty() ? "its own cases"
                                     : (std::to_string(item.case_indices.empty() ? op.cases.size()
                                                                                 : item.case_indices.size()) +
                                        " sweep cases")
                                           .c_str(),
                    item.expected_s > 0 ? Printf(", expected %.1f s", item.expected_s).c_str() : "");
      }
    }
    return 0;
  }

  const fs::path run_dir(options.run_dir);
  fs::create_directories(run_dir / "logs", ec);
  const fs::path cache = run_dir / "cache" / Printf("rank-%04d", rank);
  fs::create_directories(cache, ec);
  SetUpLogging(options.run_dir, rank, options.verbose);
  spdlog::info("opverify-batch {}: rank {} of {} ({}), run folder {}", options.jobs_path, rank, size,
               launch.launcher, options.run_dir);

  WorkerSetup setup;
  setup.job = &job;
  setup.options = &options;
  setup.rank = rank;
  setup.cache_dir = (cache / "triton").string();
  setup.executor_log = (run_dir / "logs" / Printf("rank-%04d.executor.log", rank)).string();
  setup.executor_env = {{"TRITON_CACHE_DIR", setup.cache_dir}, {"TORCHINDUCTOR_CACHE_DIR", (cache / "inductor").string()}};
  const LocalDevices devices = DetectLocalDevices(options.backend);
  if (!devices.visible_variable.empty()) {
    const char* inherited = std::getenv(devices.visible_variable.c_str());
    const std::optional<std::string> device =
        DeviceForRank(launch.local_rank, inherited ? std::optional<std::string>(inherited) : std::nullopt, devices.count);
    if (device) setup.executor_env.emplace_back(devices.visible_variable, *device);
    spdlog::info("rank {}: local rank {}, {}={}", rank, launch.local_rank, devices.visible_variable,
                 device ? *device : (inherited ? inherited : "(all)"));
  }
  if (options.resume) {
    // Cases that are stored and readable; a journaled case whose data a
    // machine crash lost is run again.
    std::vector<std::string> problems;
    Result<std::vector<CaseRecord>> stored = ReadRunRecords(options.run_dir, &problems);
    if (!stored.ok()) {
      spdlog::error("--resume: {}", stored.status().ToString());
      return 2;
    }
    for (const CaseRecord& r : stored.value()) {
      if (r.kind == RecordKind::kCase) setup.done[r.case_id] = r.passed;
      if (r.kind == RecordKind::kBenchShape) setup.benched.insert(r.extra.value("case_id", ""));
    }
    for (const auto& problem : problems) spdlog::warn("--resume: will run again: {}", problem);
    spdlog::info("resuming: {} cases already stored", setup.done.size());
  }
  Result<std::unique_ptr<ShardWriter>> shard = ShardWriter::Create(
      options.run_dir, rank, options.store, options.fsync ? Durability::kMachineCrash : Durability::kProcessCrash);
  if (!shard.ok()) {
    spdlog::critical("{}", shard.status().ToString());
    return 2;
  }
  setup.shard = shard.value().get();
  ExecutorPool pool;
  setup.pool = &pool;
  setup.stop = &g_stop_signal;
  InstallStopHandlers();
  auto run_item = [&](const WorkItem& item, const std::function<void(const json&)>& report) {
    return RunWorkItem(item, setup, report);
  };

  bool healthy = true;
  int unassigned = 0;
  json timing = json::object();
  if (rank == 0) {
    // Rank 0 works too: its worker thread talks to the coordinator in-process.
    std::vector<std::unique_ptr<Comm>> local = MakeLocalComms(2);
    std::thread worker([&] { WorkerLoop(local[1].get(), 0, run_item); });
    std::vector<Comm*> links = {local[0].get()};
    if (size > 1) links.push_back(mpi.get());
    Progress progress(static_cast<int>(items.size()), isatty(STDERR_FILENO) != 0);
    healthy = Coordinate(links, size, items, &progress, &g_stop_signal, &unassigned);
    worker.join();
    timing = {{"run_wall_s", progress.elapsed_s()}, {"case_s", progress.case_s()},
              {"store_s", progress.store_s()}, {"ab_s", progress.ab_s()}, {"item_s", progress.item_s()},
              {"bench_s", progress.bench_s()}, {"shapes_benched", progress.shapes_benched()}};
  } else {
    WorkerLoop(mpi.get(), 0, run_item);
  }
  shard.value().reset();  // close this rank's shard before anyone reads it
  if (mpi) mpi->Barrier();
  if (rank != 0) return 0;

  std::vector<std::string> problems;
  if (Status indexed = WriteResultsIndex(options.run_dir, &problems); !indexed.ok()) {
    spdlog::error("results.h5: {}", indexed.ToString());
  }
  json run_info = {{"manifest", fs::absolute(options.jobs_path).string()}, {"manifest_name", job.name}, {"ranks", size},
                   {"launcher", launch.launcher}, {"backend", options.backend},
                   {"store", store}, {"resumed", options.resume}, {"timing", timing}};
  if (options.shard) run_info["shard"] = shard_text;
  if (const int signal = g_stop_signal.load(); signal != 0) {
    run_info["stopped_by_signal"] = SignalName(signal);
    run_info["unassigned_items"] = unassigned;
    spdlog::warn("stopped by {}: {} work items not started, the items in flight cut short; "
                 "the reports cover what was done; --resume runs the rest", SignalName(signal), unassigned);
  }
  Result<RunTotals> totals = WriteRunReports(options.run_dir, run_info);
  if (!totals.ok()) {
    spdlog::error("reports: {}", totals.status().ToString());
    return 2;
  }
  std::printf("%d operators, %d cases: %d passed, %d failed -> %s\n", totals->operators, totals->cases,
              totals->passed, totals->failed, (run_dir / "summary.json").c_str());
  if (!healthy) return 2;
  if (g_stop_signal.load() != 0) return 1;  // not every case ran: not a pass
  return totals->failed == 0 && totals->cases > 0 ? 0 : 1;
}

}  // namespace
}  // namespace opverify

int main(int argc, char** argv) { return opverify::Run(argc, argv); }
