#include "runner/batch/rank_role.h"

#include <memory>
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
  Progress progress(std::move(plan), output);
  const CoordinatorResult served = Coordinate(links, size, items, &progress, limits);
  outcome.healthy = served.healthy;
  outcome.unassigned = served.unassigned;
  outcome.max_failures_reached = served.max_failures_reached;
  worker.join();
  outcome.timing = {{"run_wall_s", progress.elapsed_s()},
                    {"case_s", progress.case_s()},
                    {"store_s", progress.store_s()},
                    {"ab_s", progress.ab_s()},
                    {"item_s", progress.item_s()},
                    {"bench_s", progress.bench_s()},
                    {"shapes_benched", progress.shapes_benched()}};
  outcome.timeline = {{"ranks", size},
                      {"wall_s", progress.elapsed_s()},
                      {"items", ChunkedTimeline(progress.Timeline(), items)}};
  return outcome;
}

}  // namespace opverify
