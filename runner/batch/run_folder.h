// The run folder every rank writes into: its name, agreed by all ranks, and
// each rank's own corner of it (logs/rank-N.log, cache/rank-N/).
#pragma once

#include <string>

#include "runner/batch/batch_options.h"
#include "runner/scheduler/comm.h"

namespace opverify {

// runs/<job name>-<UTC time>, relative to the working directory.
std::string DefaultRunDir(const std::string& job_name);

// Rank 0 names the run folder (options->run_dir made absolute, or the
// default) and refuses one that already holds a run unless --resume or
// --dry-run; every other rank waits for its word on `world` and takes the
// same folder. `world`: every rank's Comm, or null when this is the only rank.
// Returns false (on every rank alike) when rank 0 refused the folder.
bool NegotiateRunDir(Comm* world, const std::string& job_name, BatchOptions* options);

// Creates this rank's logs/ and cache/rank-N/ folders and sends its log to
// logs/rank-N.log and the console. Returns the rank's cache folder.
std::string PrepareRankFolder(const std::string& run_dir, int rank, bool verbose);

// The compiler cache this rank's executors use: with --cache-dir the rank's
// persistent folder (DIR/rank-N, or DIR/shard-I-of-N/rank-N with --shard),
// locked for the run's lifetime so that two runs never write one folder at
// once (a folder another run holds falls back to `run_cache`, with a
// warning); else `run_cache`, the run folder's cold cache/rank-N/.
std::string RankCacheFolder(const BatchOptions& options, int rank, const std::string& run_cache);

}  // namespace opverify
