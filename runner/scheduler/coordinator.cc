#include "runner/scheduler/coordinator.h"

#include <deque>
#include <map>
#include <thread>

namespace opverify {

nlohmann::json WorkItemToJson(const WorkItem& item) {
  return {{"id", item.id},
          {"op_index", item.op_index},
          {"case_indices", item.case_indices},
          {"expected_s", item.expected_s}};
}

WorkItem WorkItemFromJson(const nlohmann::json& j) {
  WorkItem item;
  item.id = j.at("id").get<int>();
  item.op_index = j.at("op_index").get<int>();
  item.case_indices = j.at("case_indices").get<std::vector<int>>();
  item.expected_s = j.value("expected_s", 0.0);
  return item;
}

bool Coordinate(const std::vector<Comm*>& links, int workers, std::vector<WorkItem> items,
                Progress* progress, const std::atomic<int>* stop, int* unassigned) {
  std::deque<WorkItem> queue(items.begin(), items.end());
  std::map<std::pair<std::size_t, int>, bool> busy;  // (link, rank) -> has an item
  int stopped = 0;
  bool healthy = true;
  // One link (a single rank: its worker thread) can be waited on; with MPI
  // too, both are polled, as MPI stays on this thread.
  const double wait_s = links.size() == 1 ? 0.2 : 0.0;
  while (stopped < workers) {
    bool received = false;
    for (std::size_t l = 0; l < links.size(); ++l) {
      std::optional<Message> message = links[l]->Receive(wait_s);
      if (!message) continue;
      received = true;
      const auto key = std::make_pair(l, message->source);
      const int worker = l == 0 ? 0 : message->source;  // links[0]: rank 0's own worker
      switch (message->tag) {
        case kTagCase:
          progress->CaseDone(worker, nlohmann::json::parse(message->payload));
          break;
        case kTagFailed:
          healthy = false;
          [[fallthrough]];
        case kTagRequest:
          if (busy[key]) progress->ItemDone(worker);
          busy[key] = false;
          if (message->tag == kTagRequest && !queue.empty() &&
              !(stop != nullptr && stop->load() != 0)) {
            links[l]->Send(message->source, kTagAssign, WorkItemToJson(queue.front()).dump());
            progress->ItemStarted(worker, queue.front().id, queue.front().op_index);
            queue.pop_front();
            busy[key] = true;
          } else {
            links[l]->Send(message->source, kTagStop, "");
            ++stopped;
          }
          break;
        default:
          break;
      }
    }
    if (!received) {
      progress->Tick();
      if (wait_s == 0.0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  progress->Finish();
  if (unassigned != nullptr) *unassigned = static_cast<int>(queue.size());
  return healthy;
}

void WorkerLoop(Comm* link, int coordinator_rank, const RunItemFunction& run) {
  bool ok = true;
  for (;;) {
    link->Send(coordinator_rank, ok ? kTagRequest : kTagFailed, "");
    std::optional<Message> message;
    while (!(message = link->Receive(1.0))) {
    }
    if (message->tag != kTagAssign) return;
    const WorkItem item = WorkItemFromJson(nlohmann::json::parse(message->payload));
    ok = run(item, [&](const nlohmann::json& summary) {
      // A summary holds untrusted text (error messages): invalid UTF-8 travels as U+FFFD.
      link->Send(coordinator_rank, kTagCase,
                 summary.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    });
  }
}

}  // namespace opverify
