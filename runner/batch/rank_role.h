// What a rank does once the work is planned: rank 0 coordinates and works
// too (its worker thread reaches the coordinator through an in-process
// link); every other rank works for rank 0.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/store/run_info.h"

#include "runner/scheduler/comm.h"
#include "runner/scheduler/coordinator.h"
#include "runner/scheduler/progress.h"

namespace opverify {

struct RankOutcome {
  bool healthy = true;  // no worker failed or left before it was told to stop
  int unassigned = 0;   // items never handed out (a stop signal, --maxfail, every worker left)
  bool max_failures_reached = false;  // --maxfail stopped the run
  // Rank 0: the run's wall time and the sums of the case reports, in seconds.
  nlohmann::json timing = nlohmann::json::object();
  // Rank 0: summary.json's "timeline": {ranks, wall_s, items: Progress::Timeline()'s,
  // each with its "chunk" of "chunks"}.
  nlohmann::json timeline = nlohmann::json::object();
  // Rank 0: summary.json's "ranks_left": each worker that left before it was
  // told to stop (Coordinate's departures), {rank, reason, lost_item: null or
  // {item, operator, cases (the item's case indices; [] the whole operator)}}.
  std::vector<RankLeft> ranks_left;
};

// Serves `items` (rank 0) or works until told to stop (other ranks), running
// each item with `run_item`. `world`: every rank's Comm, or null when this is
// the only rank. `limits`: as for Coordinate (rank 0's); `channel`: this rank's
// worker's, as for WorkerLoop. Rank 0 shows its progress as `plan` and
// `output` say. Other ranks return the defaults.
RankOutcome RunRank(Comm* world, const std::vector<WorkItem>& items,
                    const RunItemFunction& run_item, const CoordinatorLimits& limits,
                    CoordinatorChannel* channel, ProgressPlan plan, const ProgressOutput& output);

// A rank that cannot do its share once the run folder is agreed: a worker
// rank leaves (LeaveWork, saying `reason`); rank 0 hands out nothing and
// tells every worker to stop, hearing each one out, so that none waits for
// work; then every rank meets at the barrier, as after RunRank. Returns
// `exit_code` on rank 0 (or alone), 0 on a worker rank: as after RunRank,
// rank 0's exit code is the run's (it names the rank that left), and a
// worker's non-zero exit may have mpirun end rank 0 before its reports.
// `world`: as for RunRank.
int AbandonRank(Comm* world, const std::string& reason, int exit_code);

}  // namespace opverify
