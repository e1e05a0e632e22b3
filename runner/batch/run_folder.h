// The run folder every rank writes into: its name, agreed by all ranks, and
// each rank's own corner of it (logs/rank-N.log, cache/rank-N/).
#pragma once

#include <string>

#include "runner/batch/batch_options.h"
#include "runner/common/status.h"
#include "runner/scheduler/comm.h"
#include "runner/store/run_lock.h"

namespace opverify {

// runs/<job name>-<UTC time>, relative to the working directory; the job
// name made a safe file name (SafeFileName): it never leaves runs/.
std::string DefaultRunDir(const std::string& job_name);

// For a run folder directly under a folder named runs/ (the default, or
// --run-dir runs/NAME): runs/latest made a relative link to it, replaced
// atomically (a new link renamed over the old), so that
// `--rerun-failed runs/latest` and `--resume --run-dir runs/latest` find the
// newest run. Nothing for another folder; an error when runs/latest is not
// a link (it is left alone) or cannot be made.
Status PointLatestAt(const std::string& run_dir);

// Rank 0 names the run folder (options->run_dir made absolute, or the
// default), creates it and takes its lock into *lock (runner/store/run_lock.h:
// one writer per folder; the other ranks only write their own shards), and
// refuses one that another run holds, or that already holds a run unless
// --resume; --dry-run touches nothing. A run folder or --previous named
// through a link (runs/latest) becomes the folder it points at; runs/latest
// moves (PointLatestAt) only once every rank has come here, having read
// --rerun-failed runs/latest (each rank says so: kTagReady). Every other
// rank waits for its word on `world` and takes the same folder. `world`: every rank's Comm, or null
// when this is the only rank. Returns false (on every rank alike) when rank
// 0 refused the folder, having said why on stderr.
//
// Each rank's `job_fingerprint` (JobFingerprint: the job as it read it)
// travels with its word; rank 0 refuses the run when another rank's differs
// from its own (the ranks would run different operators under one item id:
// a manifest edited while they started, or nodes that see different files).
bool NegotiateRunDir(Comm* world, const std::string& job_name, const std::string& job_fingerprint,
                     BatchOptions* options, RunLock* lock);

// A rank that ends before NegotiateRunDir (its manifest refused, --list, a
// --progress file it cannot open): another rank tells rank 0 why and
// returns; rank 0 hears every other rank out and refuses the run to those
// on their way to NegotiateRunDir, so that none waits for the others. Rank
// 0, in NegotiateRunDir, refuses the run when another rank ended so, and
// prints its rank and reason. Nothing when `world` is null.
void EndBeforeRun(Comm* world, const std::string& reason);

// Creates this rank's logs/ and cache/rank-N/ folders and sends its log to
// logs/rank-N.log and the console. Returns the rank's cache folder, or
// IoError naming the folder and the reason (a run folder that is a file, or
// under /proc; no space; no permission).
Result<std::string> PrepareRankFolder(const std::string& run_dir, int rank, Verbosity verbosity);

// The compiler cache this rank's executors use: with --cache-dir the rank's
// persistent folder (DIR/rank-N, or DIR/part-I-of-N/rank-N with --part),
// locked for the run's lifetime so that two runs never write one folder at
// once (a folder another run holds falls back to `run_cache`, with a
// warning); else `run_cache`, the run folder's cold cache/rank-N/.
std::string RankCacheFolder(const BatchOptions& options, int rank, const std::string& run_cache);

}  // namespace opverify
