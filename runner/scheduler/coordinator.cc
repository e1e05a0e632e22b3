#include "runner/scheduler/coordinator.h"

#include <deque>
#include <map>
#include <thread>

namespace opverify {

nlohmann::json WorkItemToJson(const WorkItem& item) {
  return {{"id", item.id},
          {"op_index", item.op_index},
          {"case_indices", item.case_indices},
          {"expected_s", item.expected_s},
          {"chunk", item.chunk},
          {"chunks", item.chunks}};
}

WorkItem WorkItemFromJson(const nlohmann::json& j) {
  WorkItem item;
  item.id = j.at("id").get<int>();
  item.op_index = j.at("op_index").get<int>();
  item.case_indices = j.at("case_indices").get<std::vector<int>>();
  item.expected_s = j.value("expected_s", 0.0);
  item.chunk = j.value("chunk", 0);
  item.chunks = j.value("chunks", 1);
  return item;
}

namespace {

// Tells every worker with an item in hand to start no further case of it.
void HaltBusyWorkers(const std::vector<Comm*>& links,
                     const std::map<std::pair<std::size_t, int>, bool>& busy) {
  for (const auto& [key, has_item] : busy) {
    if (has_item) SendOrLog(links[key.first], key.second, kTagHalt, "", "a halt (--maxfail)");
  }
}

}  // namespace

bool IsFailedCase(const nlohmann::json& summary) {
  return RankReportKindOf(summary) == RankReportKind::kCase && !summary.get<CaseSummary>().passed;
}

CoordinatorResult Coordinate(const std::vector<Comm*>& links, int workers,
                             std::vector<WorkItem> items, Progress* progress,
                             const CoordinatorLimits& limits) {
  std::deque<WorkItem> queue(items.begin(), items.end());
  std::map<std::pair<std::size_t, int>, bool> busy;  // (link, rank) -> has an item
  int stopped = 0;
  CoordinatorResult result;
  const auto stopping = [&] {
    return result.max_failures_reached || (limits.stop != nullptr && limits.stop->load() != 0);
  };
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
        case kTagCase: {
          const nlohmann::json summary = nlohmann::json::parse(message->payload);
          progress->CaseDone(worker, summary);
          if (limits.max_failures <= 0 || !IsFailedCase(summary)) break;
          if (result.max_failures_reached) {
            SendOrLog(links[l], message->source, kTagHalt, "", "a halt (--maxfail)");
          } else if (progress->failed() >= limits.max_failures) {
            result.max_failures_reached = true;
            HaltBusyWorkers(links, busy);  // the sender among them
          } else {
            SendOrLog(links[l], message->source, kTagGoOn, "", "a failed case's count");
          }
          break;
        }
        case kTagAbAsk: {
          const bool granted = limits.max_ab < 0 || result.ab_granted < limits.max_ab;
          result.ab_granted += granted ? 1 : 0;
          SendOrLog(links[l], message->source, kTagAbGrant, granted ? "1" : "0", "an A/B grant");
          break;
        }
        case kTagFailed:
          result.healthy = false;
          [[fallthrough]];
        case kTagRequest:
          if (busy[key]) progress->ItemDone(worker);
          busy[key] = false;
          if (message->tag == kTagRequest && !queue.empty() && !stopping()) {
            SendOrLog(links[l], message->source, kTagAssign, WorkItemToJson(queue.front()).dump(),
                      "a work item");
            progress->ItemStarted(worker, queue.front().id, queue.front().op_index);
            queue.pop_front();
            busy[key] = true;
          } else {
            SendOrLog(links[l], message->source, kTagStop, "", "the stop");
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
  result.unassigned = static_cast<int>(queue.size());
  return result;
}

bool CoordinatorChannel::Halted() {
  // While an item runs, the coordinator sends its worker nothing unasked but kTagHalt.
  if (!halted_ && link_ != nullptr) {
    if (std::optional<Message> message = link_->Receive(0); message && message->tag == kTagHalt)
      halted_ = true;
  }
  return halted_;
}

Message CoordinatorChannel::Await(int tag) {
  for (;;) {
    std::optional<Message> message = link_->Receive(1.0);
    if (!message) continue;
    if (message->tag == kTagHalt) halted_ = true;
    // The count of a failed case is kTagGoOn or kTagHalt; a kTagHalt sent to
    // every busy worker may come before any answer.
    if (message->tag == tag || (tag == kTagGoOn && message->tag == kTagHalt)) return *message;
  }
}

bool CoordinatorChannel::GrantAb() {
  if (link_ == nullptr) return false;
  // Unasked, the coordinator sends no grant: waiting for one would never end.
  if (!SendOrLog(link_, coordinator_rank_, kTagAbAsk, "", "an A/B request")) return false;
  return Await(kTagAbGrant).payload == "1";
}

void WorkerLoop(Comm* link, int coordinator_rank, const RunItemFunction& run,
                CoordinatorChannel* channel) {
  bool ok = true;
  for (;;) {
    // A worker that cannot ask for work has none to wait for.
    if (!SendOrLog(link, coordinator_rank, ok ? kTagRequest : kTagFailed, "", "a request for work"))
      return;
    std::optional<Message> message;
    // A halt sent while the last item ended may arrive before the answer.
    while (!(message = link->Receive(1.0)) || message->tag == kTagHalt ||
           message->tag == kTagGoOn) {
    }
    if (message->tag != kTagAssign) return;
    const WorkItem item = WorkItemFromJson(nlohmann::json::parse(message->payload));
    if (channel != nullptr) {
      channel->link_ = link;
      channel->coordinator_rank_ = coordinator_rank;
    }
    ok = run(item, [&](const nlohmann::json& summary) {
      // A summary holds untrusted text (error messages): invalid UTF-8 travels as U+FFFD.
      SendOrLog(link, coordinator_rank, kTagCase,
                summary.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                "a case's summary");
      // The count of a failed case (after a halt, the second kTagHalt that answers it is
      // passed over later).
      if (channel != nullptr && channel->await_count_ && !channel->halted_ && IsFailedCase(summary))
        channel->Await(kTagGoOn);
    });
    if (channel != nullptr) channel->link_ = nullptr;
  }
}

}  // namespace opverify
