// A rank's worker: runs the work items it is given, operator by operator, in
// executor processes, stores every case in the rank's HDF5 shard and reports
// each verdict to the coordinator as it completes.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/batch/batch_options.h"
#include "runner/executor/executor_client.h"
#include "runner/manifest/manifest.h"
#include "runner/scheduler/coordinator.h"
#include "runner/scheduler/work_plan.h"
#include "runner/store/shard_writer.h"
#include "runner/verify/operator_run.h"

namespace opverify {

struct WorkerSetup {
  const JobManifest* job = nullptr;
  const BatchOptions* options = nullptr;
  int rank = 0;
  // How the rank's executors run, for every item: the backend, the
  // executors' environment (device binding, this rank's cache), log
  // (the rank's executors' output), sandbox and the stop signal (set by
  // SIGTERM/SIGUSR1: the item's remaining cases are left), the rank's warm
  // executor pool (kept between items), and start_executor (empty:
  // ProcessExecutor::StartClient; tests give a fake).
  RunOptions run;
  std::string cache_dir;             // this rank's TRITON_CACHE_DIR (never shared between ranks)
  std::string ab_cache_parent;       // where the A/B makes its fresh caches (in the run folder)
  std::map<std::string, bool> done;  // case ids already stored (resume), and whether each passed
  std::set<std::string> benched;     // case ids whose benchmark is already stored (resume)
  // Ids of the operator-level records already stored ("<op>/@operator/<item>",
  // "<op>/@bench-item/<item>"; resume): a missing one is written again.
  std::set<std::string> facts;
  ShardWriter* shard = nullptr;
  CoordinatorChannel* channel = nullptr;  // --maxfail (Halted), --max-ab (GrantAb)
};

// The operator as its executors run it: the manifest's entry with the batch's --timeout.
OperatorSpec SpecFor(const OperatorJob& op, const BatchOptions& options);

// Runs one item; `report` gets a short JSON summary of each case once it is
// stored: {case_id, op, index, passed, error_type, message (one line, at
// most 300 code points, terminal-safe), dtype (CaseDtype's, "" unknown),
// wall_ms, store_ms, ab_ms, ab}, and at the end {kind: "item", item_ms}.
// Returns false if the store failed (the rank cannot go on).
bool RunWorkItem(const WorkItem& item, const WorkerSetup& setup,
                 const std::function<void(const nlohmann::json&)>& report);

}  // namespace opverify
