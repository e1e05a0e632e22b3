#include "runner/batch/rank_role.h"

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace opverify {
namespace {

// The progress's timeline with each item's chunk of its operator ("chunk",
// "chunks": which of how many items the operator was cut into).
nlohmann::json ChunkedTimeline(nlohmann::json timeline, const std::vector<WorkItem>& items) {
  for (nlohmann::json& entry : timeline) {
    const int id = entry.value("item", -1);
    if (id < 0 || id >= static_cast<int>(items.size())) continue;
    const WorkItem& item = items[static_cast<std::size_t>(id)];
    entry["chunk"] = item.chunk;
    entry["chunks"] = item.chunks;
  }
  return timeline;
}

// summary.json's "ranks_left" (RankOutcome's), the lost items' operators named from `op_names`.
std::vector<RankLeft> RanksLeft(const std::vector<WorkerDeparture>& departures,
                                const std::vector<std::string>& op_names) {
  std::vector<RankLeft> left;
  for (const WorkerDeparture& departure : departures) {
    RankLeft rank{departure.rank, departure.reason, std::nullopt};
    if (const std::optional<WorkItem>& item = departure.lost_item) {
      const auto op = static_cast<std::size_t>(item->op_index);
      rank.lost_item = LostItem{
          item->id, op < op_names.size() ? op_names[op] : "#" + std::to_string(op),
          item->case_indices};
    }
    left.push_back(std::move(rank));
  }
  return left;
}

}  // namespace

RankOutcome RunRank(Comm* world, const std::vector<WorkItem>& items,
                    const RunItemFunction& run_item, const CoordinatorLimits& limits,
                    CoordinatorChannel* channel, ProgressPlan plan, const ProgressOutput& output) {
  RankOutcome outcome;
  if (world != nullptr && world->rank() != 0) {
    WorkerLoop(world, 0, run_item, channel);
    return outcome;
  }
  const int size = world != nullptr ? world->size() : 1;
  std::vector<std::unique_ptr<Comm>> local = MakeLocalComms(2);
  std::thread worker([&] { WorkerLoop(local[1].get(), 0, run_item, channel); });
  std::vector<Comm*> links = {local[0].get()};
  if (size > 1) links.push_back(world);
  const std::vector<std::string> op_names = plan.op_names;
  Progress progress(std::move(plan), output);
  const CoordinatorResult served = Coordinate(links, size, items, &progress, limits);
  outcome.ranks_left = RanksLeft(served.departures, op_names);
  outcome.healthy = served.healthy;
  outcome.unassigned = served.unassigned;
  outcome.max_failures_reached = served.max_failures_reached;
  worker.join();
  outcome.timing = {{"run_wall_s", progress.elapsed_s()},
                    {"case_s", progress.case_s()},
                    {"store_s", progress.store_s()},
                    {"ab_s", progress.ab_s()},
                    {"item_s", progress.item_s()},
                    {"stopped_s", progress.stopped_s()},
                    {"bench_s", progress.bench_s()},
                    {"shapes_benched", progress.shapes_benched()}};
  outcome.timeline = {{"ranks", size},
                      {"wall_s", progress.elapsed_s()},
                      {"items", ChunkedTimeline(progress.Timeline(), items)}};
  return outcome;
}

int AbandonRank(Comm* world, const std::string& reason, int exit_code) {
  if (world == nullptr) return exit_code;
  const bool worker = world->rank() != 0;
  if (worker) {
    LeaveWork(world, 0, reason);
  } else {
    // Its own worker asks once and is told to stop with the others.
    ProgressOutput silent;
    silent.style = ProgressOutput::Style::kNone;
    RunRank(
        world, {},
        [](const WorkItem&, const std::function<void(const nlohmann::json&)>&) { return true; }, {},
        nullptr, ProgressPlan{}, silent);
  }
  world->Barrier();
  return worker ? 0 : exit_code;
}

}  // namespace opverify
