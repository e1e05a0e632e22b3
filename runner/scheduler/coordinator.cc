#include "runner/scheduler/coordinator.h"

#include <spdlog/spdlog.h>

#include <deque>
#include <exception>
#include <map>
#include <string_view>
#include <thread>
#include <utility>

#include "runner/common/json_text.h"
#include "runner/common/terminal_text.h"

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

bool IsFailedCase(const nlohmann::json& summary) {
  return RankReportKindOf(summary) == RankReportKind::kCase && !summary.get<CaseSummary>().passed;
}

namespace {

// Coordinate's state while it serves: the queue, what each worker holds,
// how many were told to stop (or left), and the result so far.
class Coordinator {
 public:
  Coordinator(const std::vector<Comm*>& links, std::vector<WorkItem> items, Progress* progress,
              const CoordinatorLimits& limits)
      : links_(links), queue_(items.begin(), items.end()), progress_(progress), limits_(limits) {}

  // Acts on one message that came on links_[l].
  void Handle(std::size_t l, const Message& message) {
    const Worker worker{l, message.source, l == 0 ? 0 : message.source};  // links[0]: rank 0's
    switch (message.tag) {
      case kTagCase:
        OnCase(worker, nlohmann::json::parse(message.payload));
        break;
      case kTagAbAsk:
        OnAbAsk(worker, message.payload);
        break;
      case kTagFailed:
        result_.healthy = false;
        EndItem(worker);
        Stop(worker);
        break;
      case kTagRequest:
        EndItem(worker);
        if (!queue_.empty() && !Stopping())
          Assign(worker);
        else
          Stop(worker);
        break;
      case kTagLeaving:
        OnLeaving(worker, message.payload);
        break;
      default:
        break;
    }
  }

  int stopped() const { return stopped_; }
  CoordinatorResult Result() {
    result_.unassigned = static_cast<int>(queue_.size());
    return result_;
  }

 private:
  struct Worker {
    std::size_t link;
    int source;  // its rank on that link
    int rank;    // as the progress and the reports name it
    std::pair<std::size_t, int> key() const { return {link, source}; }
  };

  // An A/B asked for (AbAsk as JSON; empty: the budget only): a kind of a
  // chunked operator's failure already granted to a chunk is inherited from
  // it; else granted while --max-ab lasts.
  void OnAbAsk(const Worker& worker, const std::string& payload) {
    const nlohmann::json ask = nlohmann::json::parse(payload, nullptr, false);
    std::string key;
    if (ask.is_object() && ask.value("op", "") != "")
      key = ask.value("op", "") + '\n' + ask.value("kind", "");
    if (const auto first = shared_ab_.find(key); !key.empty() && first != shared_ab_.end()) {
      ++result_.ab_shared;
      Send(worker, kTagAbGrant, "inherit:" + first->second, "an A/B answer");
      return;
    }
    const bool granted = limits_.max_ab < 0 || result_.ab_granted < limits_.max_ab;
    result_.ab_granted += granted ? 1 : 0;
    if (granted && !key.empty()) shared_ab_[key] = ask.value("case_id", "");
    Send(worker, kTagAbGrant, granted ? "1" : "0", "an A/B grant");
  }
  bool Stopping() const {
    return result_.max_failures_reached || (limits_.stop != nullptr && limits_.stop->load() != 0);
  }
  void Send(const Worker& worker, int tag, const std::string& payload, const char* what) {
    SendOrLog(links_[worker.link], worker.source, tag, payload, what);
  }
  void Assign(const Worker& worker) {
    const WorkItem& item = queue_.front();
    Send(worker, kTagAssign, WorkItemToJson(item).dump(), "a work item");
    progress_->ItemStarted(worker.rank, item.id, item.op_index);
    held_[worker.key()] = item;
    queue_.pop_front();
  }
  void Stop(const Worker& worker) {
    Send(worker, kTagStop, "", "the stop");
    ++stopped_;
  }
  // The worker's item in hand, if any, ended (finished, or given up); what it held.
  std::optional<WorkItem> EndItem(const Worker& worker) {
    std::optional<WorkItem> item;
    if (const auto found = held_.find(worker.key()); found != held_.end()) {
      item = std::move(found->second);
      held_.erase(found);
      progress_->ItemDone(worker.rank);
    }
    return item;
  }

  void OnCase(const Worker& worker, const nlohmann::json& summary) {
    progress_->CaseDone(worker.rank, summary);
    if (limits_.max_failures <= 0 || !IsFailedCase(summary)) return;
    if (result_.max_failures_reached) {
      Send(worker, kTagHalt, "", "a halt (--maxfail)");
    } else if (progress_->failed() >= limits_.max_failures) {
      result_.max_failures_reached = true;
      // Every worker with an item in hand (the sender among them) starts no further case.
      for (const auto& [key, item] : held_)
        SendOrLog(links_[key.first], key.second, kTagHalt, "", "a halt (--maxfail)");
    } else {
      Send(worker, kTagGoOn, "", "a failed case's count");
    }
  }

  // A worker that leaves is not waited for; its item in hand is lost, the queue goes to the others.
  void OnLeaving(const Worker& worker, const std::string& said) {
    result_.healthy = false;
    const std::string reason = TerminalLine(said, 300);  // an exception's text: untrusted
    WorkerDeparture departure{worker.rank, reason, EndItem(worker)};
    if (departure.lost_item) {
      spdlog::error("rank {} left the run: {}; its work item {} (operator #{}) is lost",
                    worker.rank, reason, departure.lost_item->id, departure.lost_item->op_index);
    } else {
      spdlog::error("rank {} left the run: {}", worker.rank, reason);
    }
    result_.departures.push_back(std::move(departure));
    ++stopped_;
  }

  const std::vector<Comm*>& links_;
  std::deque<WorkItem> queue_;
  Progress* progress_;
  const CoordinatorLimits& limits_;
  std::map<std::pair<std::size_t, int>, WorkItem> held_;  // (link, source) -> its item in hand
  std::map<std::string, std::string> shared_ab_;  // a chunked operator's "op\nkind" -> its A/B case
  int stopped_ = 0;
  CoordinatorResult result_;
};

}  // namespace

CoordinatorResult Coordinate(const std::vector<Comm*>& links, int workers,
                             std::vector<WorkItem> items, Progress* progress,
                             const CoordinatorLimits& limits) {
  Coordinator coordinator(links, std::move(items), progress, limits);
  // One link (a single rank: its worker thread) can be waited on; with MPI
  // too, both are polled, as MPI stays on this thread.
  const double wait_s = links.size() == 1 ? 0.2 : 0.0;
  while (coordinator.stopped() < workers) {
    bool received = false;
    for (std::size_t l = 0; l < links.size(); ++l) {
      if (std::optional<Message> message = links[l]->Receive(wait_s)) {
        received = true;
        coordinator.Handle(l, *message);
      }
    }
    if (!received) {
      progress->Tick();
      if (wait_s == 0.0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  progress->Finish();
  return coordinator.Result();
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

AbAnswer CoordinatorChannel::AskAb(const AbAsk& ask) {
  if (link_ == nullptr) return {};
  const std::string payload =
      ask.op.empty() ? ""
                     : JsonText({{"op", ask.op}, {"kind", ask.kind}, {"case_id", ask.case_id}});
  // Unasked, the coordinator sends no grant: waiting for one would never end.
  if (!SendOrLog(link_, coordinator_rank_, kTagAbAsk, payload, "an A/B request")) return {};
  const std::string answer = Await(kTagAbGrant).payload;
  constexpr std::string_view kInherit = "inherit:";
  if (answer.rfind(kInherit, 0) == 0) return {false, answer.substr(kInherit.size())};
  return {answer == "1", ""};
}

void LeaveWork(Comm* link, int coordinator_rank, const std::string& reason) {
  spdlog::error("leaving the run: {}", reason);
  SendOrLog(link, coordinator_rank, kTagLeaving, reason, "the word that it leaves");
}

namespace {

// run(item, report); false: the worker cannot go on. What `run` throws goes
// into *thrown (the worker then leaves).
bool RunCatching(const RunItemFunction& run, const WorkItem& item,
                 const std::function<void(const nlohmann::json&)>& report,
                 std::optional<std::string>* thrown) {
  try {
    return run(item, report);
  } catch (const std::exception& e) {
    *thrown = e.what();
  } catch (...) {  // not silent: the worker leaves, saying so
    *thrown = "an exception that is not a std::exception";
  }
  return false;
}

}  // namespace

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
    if (message->tag == kTagStop) return;
    if (message->tag != kTagAssign) {
      LeaveWork(link, coordinator_rank,
                "it was answered with message tag " + std::to_string(message->tag) +
                    ", neither work nor the stop");
      return;
    }
    const WorkItem item = WorkItemFromJson(nlohmann::json::parse(message->payload));
    if (channel != nullptr) {
      channel->link_ = link;
      channel->coordinator_rank_ = coordinator_rank;
    }
    const auto report = [&](const nlohmann::json& summary) {
      // A summary holds untrusted text (error messages): invalid UTF-8 travels as U+FFFD.
      SendOrLog(link, coordinator_rank, kTagCase, JsonText(summary), "a case's summary");
      // The count of a failed case (after a halt, the second kTagHalt that answers it is
      // passed over later).
      if (channel != nullptr && channel->await_count_ && !channel->halted_ && IsFailedCase(summary))
        channel->Await(kTagGoOn);
    };
    std::optional<std::string> thrown;
    ok = RunCatching(run, item, report, &thrown);
    if (channel != nullptr) channel->link_ = nullptr;
    if (thrown) {
      LeaveWork(link, coordinator_rank,
                "work item " + std::to_string(item.id) + " threw: " + *thrown);
      return;
    }
  }
}

}  // namespace opverify
