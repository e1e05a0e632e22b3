// Rank 0's coordinator: hands out work items dynamically (each worker asks
// for the next when it is free, longest expected first) and receives every
// case verdict as it completes. Workers reach it through Comms: remote
// ranks through MPI, rank 0's own worker through an in-process link.
#pragma once

#include <atomic>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/scheduler/comm.h"
#include "runner/scheduler/progress.h"
#include "runner/scheduler/work_plan.h"

namespace opverify {

// Message tags between workers and the coordinator.
enum BatchTag : int {
  kTagRequest = 1,  // worker -> coordinator: ready for an item
  kTagCase = 2,     // worker -> coordinator: one case's summary (JSON)
  kTagAssign = 3,   // coordinator -> worker: a work item (JSON)
  kTagStop = 4,     // coordinator -> worker: no more work
  kTagFailed = 5,   // worker -> coordinator: this worker cannot go on (store failure)
};

nlohmann::json WorkItemToJson(const WorkItem& item);
WorkItem WorkItemFromJson(const nlohmann::json& j);

// Serves `links` (each a Comm whose peers other than its own rank are
// workers) until all `workers` have been told to stop: hands out `items` in
// their order (PlanWork's, longest first), each to one worker, and tells
// `progress` of every item handed out and finished and every case summary.
// links[0] reaches rank 0's own worker (the progress calls it rank 0); on
// the others a worker's rank is its source. A worker that ends without a word (a
// killed rank) is waited for: under MPI the launcher ends the job instead.
// `stop` (optional): once set (a SIGTERM or SIGUSR1), no more work is handed
// out; the items in flight end early (their workers see the same flag).
// Returns false when a worker reported a failure it could not go on from
// (that worker is told to stop, the others go on); *unassigned (optional)
// gets the number of items never handed out.
bool Coordinate(const std::vector<Comm*>& links, int workers, std::vector<WorkItem> items,
                Progress* progress, const std::atomic<int>* stop = nullptr,
                int* unassigned = nullptr);

// Runs one work item, giving `report` each case's summary (JSON) as it
// completes; returns false when the worker cannot go on.
using RunItemFunction = std::function<bool(
    const WorkItem& item, const std::function<void(const nlohmann::json&)>& report)>;

// A worker's loop: ask, run, repeat, until told to stop. After `run` returns
// false the worker reports the failure instead of asking, and is told to stop.
void WorkerLoop(Comm* link, int coordinator_rank, const RunItemFunction& run);

}  // namespace opverify
