// Rank 0's coordinator: hands out work items dynamically (each worker asks
// for the next when it is free, longest expected first) and receives every
// case verdict as it completes. Workers reach it through Comms: remote
// ranks through MPI, rank 0's own worker through an in-process link.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/scheduler/comm.h"
#include "runner/scheduler/progress.h"
#include "runner/scheduler/work_plan.h"

namespace opverify {

// Message tags between workers and the coordinator.
enum BatchTag : int {
  kTagRequest = 1,   // worker -> coordinator: ready for an item
  kTagCase = 2,      // worker -> coordinator: one case's summary (JSON)
  kTagAssign = 3,    // coordinator -> worker: a work item (JSON)
  kTagStop = 4,      // coordinator -> worker: no more work
  kTagFailed = 5,    // worker -> coordinator: this worker cannot go on (store failure)
  kTagHalt = 6,      // coordinator -> worker: start no more cases of the item in hand (--maxfail)
  kTagGoOn = 7,      // coordinator -> worker: a failed case was counted, below --maxfail
  kTagAbAsk = 8,     // worker -> coordinator: may this case have an A/B re-run? (AbAsk)
  kTagAbGrant = 9,   // coordinator -> worker: "1" (yes), "0" (the budget is spent), or
                     // "inherit:<case id>" (another chunk of the operator runs that A/B)
  kTagLeaving = 10,  // worker -> coordinator: it leaves now, untold to stop; why (text)
};

// A case summary that counts toward --maxfail: a case's (not an item's or a
// benchmark's) that did not pass.
bool IsFailedCase(const nlohmann::json& summary);

nlohmann::json WorkItemToJson(const WorkItem& item);
WorkItem WorkItemFromJson(const nlohmann::json& j);

// When the coordinator stops handing out work before the queue is empty.
struct CoordinatorLimits {
  // Once set (a SIGTERM or SIGUSR1), no more work is handed out; the items in
  // flight end early (their workers see the same flag).
  const std::atomic<int>* stop = nullptr;
  // --maxfail: once this many failed case summaries arrived (0: no limit), no
  // more work is handed out and every busy worker is told kTagHalt (it ends
  // its item after the case in hand, whose summary still counts). Every
  // failed case's worker gets an answer, kTagHalt or kTagGoOn.
  int max_failures = 0;
  // --max-ab: the A/B re-runs the whole run may spend (-1: no limit); each
  // kTagAbAsk granted takes one while any is left.
  int max_ab = -1;
};

// A worker's ask for an A/B re-run (kTagAbAsk). `op` empty: the budget only.
// Else the case is of an operator cut into chunks on several ranks, and its
// failure of `kind` is re-run once over all of them: the first chunk to ask
// runs it (its `case_id` noted), a later one inherits that case's class.
struct AbAsk {
  std::string op;
  std::string kind;
  std::string case_id;
};
struct AbAnswer {
  bool granted = false;
  std::string inherit_from;  // set: do not re-run; the class is this case's
};

// A worker that left before it was told to stop (kTagLeaving): the rank, what
// it said it did, and the item it held, if any, whose cases it did not
// report are lost (--resume runs them).
struct WorkerDeparture {
  int rank = -1;
  std::string reason;
  std::optional<WorkItem> lost_item;
};

struct CoordinatorResult {
  bool healthy = true;  // no worker failed or left before it was told to stop
  int unassigned = 0;   // items never handed out
  bool max_failures_reached = false;
  int ab_granted = 0;                       // kTagAbAsk answered yes
  int ab_shared = 0;                        // kTagAbAsk told to inherit another chunk's A/B
  std::vector<WorkerDeparture> departures;  // in the order they left
};

// Serves `links` (each a Comm whose peers other than its own rank are
// workers) until all `workers` have been told to stop: hands out `items` in
// their order (PlanWork's, longest first), each to one worker, and tells
// `progress` of every item handed out and finished and every case summary.
// links[0] reaches rank 0's own worker (the progress calls it rank 0); on
// the others a worker's rank is its source. A worker that reports a failure
// it cannot go on from is told to stop; one that leaves (kTagLeaving) is
// counted as stopped, its item in hand recorded as lost and logged with its
// rank and reason; the others go on with the rest of the queue (the result
// is then not healthy). A worker that ends without a word (a killed rank)
// is waited for: under MPI the launcher ends the job instead, and every
// way out of WorkerLoop but a failed send says a word.
CoordinatorResult Coordinate(const std::vector<Comm*>& links, int workers,
                             std::vector<WorkItem> items, Progress* progress,
                             const CoordinatorLimits& limits = {});

// Runs one work item, giving `report` each case's summary (JSON) as it
// completes; returns false when the worker cannot go on.
using RunItemFunction = std::function<bool(
    const WorkItem& item, const std::function<void(const nlohmann::json&)>& report)>;

// A worker's item's line to the coordinator, on the worker's thread (as MPI
// wants). WorkerLoop points it at its link while an item runs; between
// items it answers from what it heard.
//   Halted(): kTagHalt came (--maxfail reached): start no further case. The
//     item asks before each case.
//   AskAb(): asks for an A/B re-run (--max-ab; a chunked operator's A/B
//     once over its chunks) and waits.
// `await_count` (the coordinator has a --maxfail): after each failed case
// the worker waits for the coordinator to count it, so that no case starts
// after the one that reached the limit.
class CoordinatorChannel {
 public:
  explicit CoordinatorChannel(bool await_count = false) : await_count_(await_count) {}
  bool Halted();
  AbAnswer AskAb(const AbAsk& ask);
  bool GrantAb() { return AskAb({}).granted; }

 private:
  friend void WorkerLoop(Comm*, int, const RunItemFunction&, CoordinatorChannel*);
  // The next message of tag `tag` (kTagGoOn: or kTagHalt); a kTagHalt on the way is noted.
  Message Await(int tag);

  bool await_count_ = false;
  Comm* link_ = nullptr;  // set while an item runs
  int coordinator_rank_ = 0;
  bool halted_ = false;
};

// A worker's loop: ask, run, repeat, until told to stop. After `run` returns
// false the worker reports the failure instead of asking, and is told to stop.
// When `run` throws, or an answer is neither work nor the stop, the worker
// leaves (LeaveWork) saying why, and returns. `channel` (optional): what
// `run` asks the coordinator through.
void WorkerLoop(Comm* link, int coordinator_rank, const RunItemFunction& run,
                CoordinatorChannel* channel = nullptr);

// Tells the coordinator that this worker leaves without being told to stop
// (kTagLeaving), `reason` saying what it did: a worker rank that returns
// before or out of its WorkerLoop, so that the coordinator does not wait
// for it. Logged as an error on this side too.
void LeaveWork(Comm* link, int coordinator_rank, const std::string& reason);

}  // namespace opverify
