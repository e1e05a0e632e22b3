#include "runner/batch/run_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "runner/batch/warm_cache.h"
#include "runner/common/file_name.h"
#include "runner/common/json_text.h"
#include "runner/common/strings.h"
#include "runner/common/terminal_log.h"
#include "runner/common/terminal_text.h"
#include "runner/scheduler/coordinator.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace opverify {
namespace {

constexpr int kTagConfig = 100;  // rank 0 -> every rank: the run folder
constexpr int kTagReady = 101;   // every other rank -> rank 0: it goes on to the run folder
// An other rank that ends before the run folder is agreed sends rank 0
// kTagLeaving (the scheduler's), its reason the payload.

void SetUpLogging(const std::string& run_dir, int rank, Verbosity verbosity) {
  std::vector<spdlog::sink_ptr> sinks;
  // Both without the escape sequences untrusted text (error messages) may hold.
  sinks.push_back(TerminalSafeSink(std::make_shared<spdlog::sinks::basic_file_sink_mt>(
      Printf("%s/logs/rank-%04d.log", run_dir.c_str(), rank), false)));
  auto console = TerminalSafeSink(std::make_shared<spdlog::sinks::stderr_color_sink_mt>(), true);
  // Rank 0 shows warnings (the progress line is its voice); others, and -q, only errors.
  console->set_level(verbosity == Verbosity::kVerbose               ? spdlog::level::info
                     : rank == 0 && verbosity == Verbosity::kNormal ? spdlog::level::warn
                                                                    : spdlog::level::err);
  sinks.push_back(console);
  auto logger =
      std::make_shared<spdlog::logger>(Printf("rank-%04d", rank), sinks.begin(), sinks.end());
  logger->set_level(spdlog::level::info);
  logger->flush_on(spdlog::level::info);
  logger->set_pattern(Printf("[%%Y-%%m-%%d %%H:%%M:%%S.%%e] [rank %d] [%%l] %%v", rank));
  spdlog::set_default_logger(logger);
}

}  // namespace

std::string DefaultRunDir(const std::string& job_name) {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", std::gmtime(&now));
  // The job name is data: it names one folder under runs/, never a path.
  return (fs::path("runs") / (SafeFileName(job_name) + "-" + stamp)).string();
}

Status PointLatestAt(const std::string& run_dir) {
  const fs::path dir = fs::path(run_dir).lexically_normal();
  const fs::path parent = dir.parent_path();
  if (parent.filename() != "runs") return Status::Ok();
  const fs::path latest = parent / "latest";
  std::error_code ec;
  if (fs::exists(fs::symlink_status(latest, ec)) && !fs::is_symlink(fs::symlink_status(latest, ec)))
    return Status::InvalidInput(latest.string() + " is not a link; left as it is");
  // A new link beside it, renamed over it: a reader sees the old run or the new, never none.
  const fs::path temporary = parent / Printf(".latest.%d", static_cast<int>(getpid()));
  fs::remove(temporary, ec);
  fs::create_directory_symlink(dir.filename(), temporary, ec);
  if (!ec) fs::rename(temporary, latest, ec);
  if (ec) {
    fs::remove(temporary, ec);
    return Status::IoError(latest.string() + ": cannot point it at " + dir.filename().string() +
                           ": " + ec.message());
  }
  return Status::Ok();
}

namespace {

// Rank 0's checks of the folder it chose: creates it, takes its lock (held
// in *lock until the run ends) and refuses one that already holds a run
// unless --resume. Prints why it refuses and returns false.
bool ClaimRunDir(const BatchOptions& options, RunLock* lock) {
  std::error_code ec;
  const fs::path dir = options.run_dir;
  if (!fs::create_directories(dir, ec) && ec) {
    std::fprintf(stderr, "opverify-batch: cannot create the run folder %s: %s\n",
                 TerminalSafe(dir.string()).c_str(), ec.message().c_str());
    return false;
  }
  if (!fs::is_directory(dir, ec)) {
    std::fprintf(stderr, "opverify-batch: the run folder %s is not a folder\n",
                 TerminalSafe(dir.string()).c_str());
    return false;
  }
  std::string broke;
  Result<RunLock> taken = RunLock::Acquire(dir.string(), "opverify-batch", &broke);
  if (!taken.ok()) {
    std::fprintf(stderr, "opverify-batch: %s\n", TerminalSafe(taken.status().message()).c_str());
    return false;
  }
  *lock = std::move(taken).value();
  if (!broke.empty()) {
    std::fprintf(stderr,
                 "opverify-batch: %s: broke the stale lock of %s, which is no longer running\n",
                 TerminalSafe(dir.string()).c_str(), TerminalSafe(broke).c_str());
  }
  if (!options.resume && fs::exists(dir / "shards", ec)) {
    std::fprintf(stderr,
                 "opverify-batch: %s already holds a run; use --resume to finish it, or another "
                 "--run-dir\n",
                 TerminalSafe(dir.string()).c_str());
    *lock = RunLock();
    return false;
  }
  return true;
}

// A folder named through a link (runs/latest): the folder it points at, so that the run keeps
// it when runs/latest moves on (a link to itself otherwise, with --resume --run-dir runs/latest).
std::string FollowLink(const std::string& folder) {
  std::error_code ec;
  const fs::path target = fs::read_symlink(folder, ec);
  return ec ? folder : (fs::path(folder).parent_path() / target).lexically_normal().string();
}

// Rank 0: every other rank's word before the run folder is chosen, kTagReady
// (with its job's fingerprint) or kTagLeaving. Returns the ranks that go on;
// *left gets "rank N: reason" for each that ends, and for each whose job is
// not `fingerprint` (none is compared when it is empty).
std::vector<int> HearEveryRank(Comm* world, const std::string& fingerprint,
                               std::vector<std::string>* left) {
  std::vector<int> ready;
  for (int heard = 1; heard < world->size();) {
    const std::optional<Message> word = world->Receive(1.0);
    if (!word || (word->tag != kTagReady && word->tag != kTagLeaving)) continue;
    ++heard;
    if (word->tag == kTagLeaving) {
      left->push_back("rank " + std::to_string(word->source) + ": " + word->payload);
      continue;
    }
    ready.push_back(word->source);
    if (!fingerprint.empty() && word->payload != fingerprint) {
      left->push_back("rank " + std::to_string(word->source) +
                      ": it read a different job than rank 0 (operators, files, cases or "
                      "settings differ: the manifest or a file it includes changed while the "
                      "ranks started, or the ranks see different files)");
    }
  }
  return ready;
}

// Rank 0's word on the run folder to each rank in `ranks`.
void TellRunDir(Comm* world, const std::vector<int>& ranks, const std::string& run_dir,
                bool refused) {
  const std::string word = JsonText({{"run_dir", run_dir}, {"refused", refused}});
  for (int r : ranks) SendOrLog(world, r, kTagConfig, word, "the run folder");
}

}  // namespace

void EndBeforeRun(Comm* world, const std::string& reason) {
  if (world == nullptr) return;
  if (world->rank() != 0) {
    SendOrLog(world, 0, kTagLeaving, reason, "the word that it ends before the run");
    return;
  }
  std::vector<std::string> left;
  TellRunDir(world, HearEveryRank(world, "", &left), "", /*refused=*/true);
}

bool NegotiateRunDir(Comm* world, const std::string& job_name, const std::string& job_fingerprint,
                     BatchOptions* options, RunLock* lock) {
  const int rank = world != nullptr ? world->rank() : 0;
  // Every rank has read the earlier runs it was given (--rerun-failed runs/latest) before rank 0
  // points runs/latest at this one: a rank still on its way would read the new run instead.
  // Rank 0 hears each rank's word (no barrier: a rank that ends before the run says so).
  std::vector<int> ready;
  std::vector<std::string> left;
  if (world != nullptr && rank == 0) ready = HearEveryRank(world, job_fingerprint, &left);
  if (world != nullptr && rank != 0)
    SendOrLog(world, 0, kTagReady, job_fingerprint, "the word that it goes on to the run");
  bool refused = false;
  if (rank == 0 && !left.empty()) {
    for (const std::string& word : left)
      std::fprintf(stderr, "opverify-batch: %s; the run cannot go on without it\n",
                   TerminalSafe(word).c_str());
    TellRunDir(world, ready, "", /*refused=*/true);
    return false;
  }
  if (rank == 0) {
    if (options->run_dir.empty())
      options->run_dir = DefaultRunDir(job_name.empty() ? "job" : job_name);
    options->run_dir = FollowLink(fs::absolute(options->run_dir).lexically_normal().string());
    if (!options->previous_run.empty()) options->previous_run = FollowLink(options->previous_run);
    if (!options->dry_run) refused = !ClaimRunDir(*options, lock);
    if (!options->dry_run && !refused) {
      if (Status pointed = PointLatestAt(options->run_dir); !pointed.ok())
        std::fprintf(stderr, "opverify-batch: warning: %s\n",
                     TerminalSafe(pointed.ToString()).c_str());
    }
    if (world != nullptr) TellRunDir(world, ready, options->run_dir, refused);
    return !refused;
  }
  std::optional<Message> config;
  while (!(config = world->Receive(1.0)) || config->tag != kTagConfig) {
  }
  const json parsed = json::parse(config->payload);
  options->run_dir = parsed["run_dir"].get<std::string>();
  return !parsed["refused"].get<bool>();
}

Result<std::string> PrepareRankFolder(const std::string& run_dir, int rank, Verbosity verbosity) {
  const fs::path cache = fs::path(run_dir) / "cache" / Printf("rank-%04d", rank);
  for (const fs::path& folder : {fs::path(run_dir) / "logs", cache}) {
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) {
      return Status::IoError("run folder " + run_dir + ": cannot create " + folder.string() + ": " +
                             ec.message());
    }
  }
  try {
    SetUpLogging(run_dir, rank, verbosity);
  } catch (const spdlog::spdlog_ex& e) {
    return Status::IoError("run folder " + run_dir + ": cannot open its log: " + e.what());
  }
  return cache.string();
}

std::string RankCacheFolder(const BatchOptions& options, int rank, const std::string& run_cache) {
  if (options.cache_dir.empty()) return run_cache;
  fs::path folder = fs::absolute(options.cache_dir);
  std::error_code ec;
  if (options.part) {
    const fs::path part =
        folder / Printf("part-%d-of-%d", options.part->index, options.part->count);
    // Caches kept under the part's old name (shard-I-of-N) are taken over, not
    // compiled again; the first rank's rename wins, the others find it done.
    const fs::path old =
        folder / Printf("shard-%d-of-%d", options.part->index, options.part->count);
    if (!fs::exists(part, ec) && fs::is_directory(old, ec)) fs::rename(old, part, ec);
    folder = part;
  }
  folder /= Printf("rank-%04d", rank);
  fs::create_directories(folder, ec);
  if (ec) {
    spdlog::warn(
        "rank {}: --cache-dir: cannot create {} ({}); using a cold cache in the run folder", rank,
        folder.string(), ec.message());
    return run_cache;
  }
  // Held until the rank exits (never closed): concurrent writers to one
  // Triton cache see files vanish under them (NOTES.md).
  const std::string lock = folder.string() + ".lock";
  const int fd = open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
    spdlog::warn(
        "rank {}: --cache-dir: {} is in use by another run ({}); using a cold cache in the run "
        "folder",
        rank, folder.string(), fd < 0 ? std::strerror(errno) : "locked");
    if (fd >= 0) close(fd);
    return run_cache;
  }
  const WarmedCache warmed = WarmFromSiblings(folder);
  if (warmed.files > 0 || warmed.skipped > 0) {
    spdlog::info("rank {}: --cache-dir: {} files taken from the other ranks' caches ({} not linked)",
                 rank, warmed.files, warmed.skipped);
  }
  return folder.string();
}

}  // namespace opverify
