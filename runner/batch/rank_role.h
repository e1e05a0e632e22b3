// What a rank does once the work is planned: rank 0 coordinates and works
// too (its worker thread reaches the coordinator through an in-process
// link); every other rank works for rank 0.
#pragma once

#include <atomic>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/scheduler/comm.h"
#include "runner/scheduler/coordinator.h"
#include "runner/scheduler/progress.h"

namespace opverify {

struct RankOutcome {
  bool healthy = true;  // no worker reported a failure it could not go on from
  int unassigned = 0;   // items never handed out (after a stop signal or --maxfail)
  bool max_failures_reached = false;  // --maxfail stopped the run
  // Rank 0: the run's wall time and the sums of the case reports, in seconds.
  nlohmann::json timing = nlohmann::json::object();
  // Rank 0: summary.json's "timeline": {ranks, wall_s, items: Progress::Timeline()'s,
  // each with its "chunk" of "chunks"}.
  nlohmann::json timeline = nlohmann::json::object();
};

// Serves `items` (rank 0) or works until told to stop (other ranks), running
// each item with `run_item`. `world`: every rank's Comm, or null when this is
// the only rank. `limits`: as for Coordinate (rank 0's); `channel`: this rank's
// worker's, as for WorkerLoop. Rank 0 shows its progress as `plan` and
// `output` say. Other ranks return the defaults.
RankOutcome RunRank(Comm* world, const std::vector<WorkItem>& items,
                    const RunItemFunction& run_item, const CoordinatorLimits& limits,
                    CoordinatorChannel* channel, ProgressPlan plan, const ProgressOutput& output);

}  // namespace opverify
