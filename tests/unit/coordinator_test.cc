// The coordinator and its workers over in-process Comms, wired as
// opverify-batch wires them: rank 0's own worker through a pair of its own,
// the other workers through a second world (MPI's place). Scheduling rules
// hold without mpirun: longest first, each item once, a failing worker, the
// stop signal, a resumed run, every case summary heard.
#include "runner/scheduler/coordinator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace opverify {
namespace {

using Report = std::function<void(const nlohmann::json&)>;
// What worker `worker` does with an item; false: it cannot go on.
using WorkerRun = std::function<bool(int worker, const WorkItem& item, const Report& report)>;

struct Served {
  bool healthy = false;
  std::vector<WorkerDeparture> departures;
  int unassigned = -1;
  bool max_failures_reached = false;
  int ab_granted = 0;
  int ab_shared = 0;
  std::vector<std::vector<int>> items_of;  // per worker: the ids of the items it ran, in order
  int cases = 0;
  int failed = 0;
  double case_s = 0, item_s = 0, bench_s = 0;
  int shapes_benched = 0;
  std::string progress_text;  // what the progress wrote (its last line)

  std::vector<int> AllItems() const {
    std::vector<int> all;
    for (const auto& ids : items_of) all.insert(all.end(), ids.begin(), ids.end());
    std::sort(all.begin(), all.end());
    return all;
  }
};

// What worker `worker`'s thread does with its link: WorkerLoop, unless a test says otherwise.
using WorkerBody = std::function<void(int worker, Comm* link, const RunItemFunction& run,
                                      CoordinatorChannel* channel)>;

// `channels` (optional): one per worker, given to its WorkerLoop.
Served Serve(int workers, const std::vector<WorkItem>& items, const WorkerRun& run,
             const CoordinatorLimits& limits = {},
             std::vector<CoordinatorChannel>* channels = nullptr, WorkerBody body = nullptr) {
  if (!body) {
    body = [](int, Comm* link, const RunItemFunction& run_item, CoordinatorChannel* channel) {
      WorkerLoop(link, 0, run_item, channel);
    };
  }
  auto channel_of = [&](int w) {
    return channels != nullptr ? &(*channels)[static_cast<std::size_t>(w)] : nullptr;
  };
  std::vector<std::unique_ptr<Comm>> own = MakeLocalComms(2);
  std::vector<std::unique_ptr<Comm>> world = MakeLocalComms(workers);
  std::vector<Comm*> links = {own[0].get()};
  if (workers > 1) links.push_back(world[0].get());

  Served served;
  served.items_of.resize(static_cast<std::size_t>(workers));
  std::mutex mutex;
  auto worker_run = [&](int w) {
    return [&, w](const WorkItem& item, const Report& report) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        served.items_of[static_cast<std::size_t>(w)].push_back(item.id);
      }
      return run(w, item, report);
    };
  };
  std::vector<std::thread> threads;
  threads.emplace_back([&] { body(0, own[1].get(), worker_run(0), channel_of(0)); });
  for (int w = 1; w < workers; ++w) {
    threads.emplace_back([&, w] {
      body(w, world[static_cast<std::size_t>(w)].get(), worker_run(w), channel_of(w));
    });
  }

  std::FILE* text = std::tmpfile();
  {
    Progress progress(static_cast<int>(items.size()), /*terminal=*/false, /*plain_interval_s=*/3600,
                      text);
    const CoordinatorResult result = Coordinate(links, workers, items, &progress, limits);
    served.healthy = result.healthy;
    served.departures = result.departures;
    served.unassigned = result.unassigned;
    served.max_failures_reached = result.max_failures_reached;
    served.ab_granted = result.ab_granted;
    served.ab_shared = result.ab_shared;
    served.cases = progress.cases();
    served.failed = progress.failed();
    served.case_s = progress.case_s();
    served.item_s = progress.item_s();
    served.bench_s = progress.bench_s();
    served.shapes_benched = progress.shapes_benched();
  }
  // Coordinate returns once every worker was told to stop: each loop ends.
  for (auto& t : threads) t.join();
  std::rewind(text);
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, text) != nullptr) served.progress_text += buffer;
  std::fclose(text);
  return served;
}

// n operators of one case each, operator i expected to take n - i seconds
// in an earlier run, listed shortest first in the manifest.
std::vector<WorkItem> PlannedItems(int n) {
  std::vector<OperatorShape> ops;
  std::map<std::string, double> previous;
  for (int i = 0; i < n; ++i) {
    const std::string name = "op" + std::to_string(i);
    ops.push_back({name, 1});
    previous[name] = i + 1;
  }
  return PlanWork(ops, previous, {SchedulePolicy::kFifo, 1, 64});
}

std::vector<int> Iota(int n) {
  std::vector<int> ids(static_cast<std::size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

// Holds every worker in its first item until all `workers` hold one, so each
// worker is sure to take part (bounded, so a broken coordinator fails rather
// than hangs).
class FirstItemGate {
 public:
  explicit FirstItemGate(int workers) : workers_(workers) {}
  bool Pass(int worker) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!seen_.insert(worker).second) return true;
    all_.notify_all();
    return all_.wait_for(lock, std::chrono::seconds(10),
                         [&] { return static_cast<int>(seen_.size()) == workers_; });
  }

 private:
  int workers_;
  std::mutex mutex_;
  std::condition_variable all_;
  std::set<int> seen_;
};

void ReportCase(const Report& report, const std::string& case_id, bool passed) {
  report({{"case_id", case_id}, {"passed", passed}, {"wall_ms", 10.0}});
}

TEST(Coordinate, HandsEveryItemToExactlyOneOfSeveralWorkers) {
  const std::vector<WorkItem> items = PlannedItems(20);
  FirstItemGate gate(4);
  const Served served =
      Serve(4, items, [&](int worker, const WorkItem& item, const Report& report) {
        EXPECT_TRUE(gate.Pass(worker));
        ReportCase(report, "case" + std::to_string(item.id), true);
        return true;
      });
  EXPECT_TRUE(served.healthy);
  EXPECT_EQ(served.unassigned, 0);
  EXPECT_EQ(served.AllItems(), Iota(20));
  for (const auto& ids : served.items_of) EXPECT_FALSE(ids.empty());
  EXPECT_EQ(served.cases, 20);
  EXPECT_NE(served.progress_text.find("[20/20 100.0%] 0 failed"), std::string::npos)
      << served.progress_text;
}

TEST(Coordinate, HandsOutTheLongestItemsFirst) {
  const std::vector<WorkItem> items = PlannedItems(12);
  // One worker takes them in the planned order: longest expected first.
  const Served alone = Serve(1, items, [](int, const WorkItem&, const Report&) { return true; });
  ASSERT_EQ(alone.items_of[0], Iota(12));
  for (std::size_t i = 1; i < items.size(); ++i)
    EXPECT_GE(items[i - 1].expected_s, items[i].expected_s);
  EXPECT_EQ(items.front().op_index, 11);

  // Three workers: the three longest go out first, one each, and each
  // worker's own items come in planned order.
  FirstItemGate gate(3);
  const Served served = Serve(3, items, [&](int worker, const WorkItem&, const Report&) {
    EXPECT_TRUE(gate.Pass(worker));
    return true;
  });
  std::vector<int> firsts;
  for (const auto& ids : served.items_of) {
    ASSERT_FALSE(ids.empty());
    firsts.push_back(ids.front());
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  }
  std::sort(firsts.begin(), firsts.end());
  EXPECT_EQ(firsts, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(served.AllItems(), Iota(12));
}

TEST(Coordinate, ASplitOperatorsVerdictsAreThoseOfItRunWhole) {
  // "big" (40 cases, every 7th failing) is over a rank's fair share of four:
  // the cost plan cuts it into chunks that several workers run; the verdicts
  // heard, by case, are those of the plan before costs, which runs it whole.
  std::vector<OperatorShape> ops = {{"big", 40}};
  for (int i = 0; i < 10; ++i) ops.push_back({"op" + std::to_string(i), 1});
  const auto verdicts_of = [&](const std::vector<WorkItem>& items, std::set<int>* big_workers) {
    std::map<std::string, bool> verdicts;
    std::mutex mutex;
    FirstItemGate gate(4);
    Serve(4, items, [&](int worker, const WorkItem& item, const Report& report) {
      EXPECT_TRUE(gate.Pass(worker));
      const OperatorShape& op = ops[static_cast<std::size_t>(item.op_index)];
      std::vector<int> indices = item.case_indices;
      if (indices.empty()) indices = Iota(op.known_cases);
      for (int index : indices) {
        const std::string id = op.name + "/" + std::to_string(index);
        const bool passed = index % 7 != 3;
        ReportCase(report, id, passed);
        std::lock_guard<std::mutex> lock(mutex);
        EXPECT_TRUE(verdicts.emplace(id, passed).second) << id << " ran twice";
        if (item.op_index == 0 && big_workers != nullptr) big_workers->insert(worker);
      }
      return true;
    });
    return verdicts;
  };
  const std::vector<WorkItem> split = PlanWork(ops, {}, {SchedulePolicy::kCost, 4, 64});
  const std::vector<WorkItem> whole = PlanWork(ops, {}, {SchedulePolicy::kFifo, 4, 64});
  EXPECT_GT(split.size(), whole.size());
  std::set<int> big_workers;
  const std::map<std::string, bool> split_verdicts = verdicts_of(split, &big_workers);
  EXPECT_EQ(split_verdicts, verdicts_of(whole, nullptr));
  EXPECT_EQ(split_verdicts.size(), 50u);
  EXPECT_GT(big_workers.size(), 1u);
}

TEST(Coordinate, AWorkerThatCannotGoOnGetsNoMoreWorkAndTheOthersFinish) {
  const std::vector<WorkItem> items = PlannedItems(15);
  FirstItemGate gate(3);
  const Served served = Serve(3, items, [&](int worker, const WorkItem&, const Report&) {
    EXPECT_TRUE(gate.Pass(worker));
    return worker != 1;  // worker 1's store fails on its first item
  });
  EXPECT_FALSE(served.healthy);
  EXPECT_EQ(served.items_of[1].size(), 1u);
  EXPECT_EQ(served.unassigned, 0);
  EXPECT_EQ(served.AllItems(), Iota(15));
  EXPECT_NE(served.progress_text.find("15/15 items"), std::string::npos) << served.progress_text;
}

TEST(Coordinate, ALoneWorkerThatCannotGoOnLeavesTheRestUnassigned) {
  const Served served = Serve(
      1, PlannedItems(10), [](int, const WorkItem& item, const Report&) { return item.id != 2; });
  EXPECT_FALSE(served.healthy);
  EXPECT_EQ(served.items_of[0], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(served.unassigned, 7);
}

TEST(Coordinate, AfterTheStopSignalNothingMoreIsHandedOut) {
  const int n = 30;
  std::atomic<int> stop{0};
  const Served served = Serve(
      2, PlannedItems(n),
      [&](int, const WorkItem& item, const Report& report) {
        ReportCase(report, "case" + std::to_string(item.id), true);
        if (item.id == 3) stop.store(15);  // SIGTERM while item 3 runs
        // A later item (the other worker's) lasts until the signal: one at most.
        for (int waited_ms = 0; item.id > 3 && stop.load() == 0 && waited_ms < 10000; ++waited_ms) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return true;
      },
      {&stop});
  EXPECT_TRUE(served.healthy);
  const std::vector<int> handed = served.AllItems();
  // Items 0..3, and at most the one the other worker was given before the stop.
  EXPECT_GE(handed.size(), 4u);
  EXPECT_LE(handed.size(), 5u);
  EXPECT_EQ(handed, Iota(static_cast<int>(handed.size())));
  EXPECT_EQ(served.unassigned, n - static_cast<int>(handed.size()));
  EXPECT_EQ(served.cases, static_cast<int>(handed.size()));
}

// Items of 4 cases each, every case failing, run as RunWorkItem runs them:
// each case only while the worker's halt says go on.
Served ServeFailingItems(int workers, int items, int max_failures) {
  std::vector<CoordinatorChannel> channels;
  for (int w = 0; w < workers; ++w) channels.emplace_back(/*await_count=*/true);
  return Serve(
      workers, PlannedItems(items),
      [&](int w, const WorkItem& item, const Report& report) {
        for (int k = 0; k < 4 && !channels[static_cast<std::size_t>(w)].Halted(); ++k)
          ReportCase(report, std::to_string(item.id) + "/" + std::to_string(k), false);
        return true;
      },
      {nullptr, max_failures}, &channels);
}

TEST(Coordinate, MaxFailuresStopsAWorkerRightAfterTheFailureThatReachedIt) {
  const Served served = ServeFailingItems(1, 20, 3);
  EXPECT_TRUE(served.healthy);
  EXPECT_TRUE(served.max_failures_reached);
  EXPECT_EQ(served.failed, 3);
  EXPECT_EQ(served.AllItems(), (std::vector<int>{0}));
  EXPECT_EQ(served.unassigned, 19);
}

TEST(Coordinate, MaxFailuresOverSeveralWorkersLetsOnlyTheCasesInHandFinish) {
  const Served served = ServeFailingItems(3, 20, 3);
  EXPECT_TRUE(served.max_failures_reached);
  // Each other worker may have one failed case in hand, not yet counted.
  EXPECT_GE(served.failed, 3);
  EXPECT_LE(served.failed, 3 + 2);
  const int handed = static_cast<int>(served.AllItems().size());
  EXPECT_LE(handed, 3);  // no item of 4 cases ends before the limit
  EXPECT_EQ(served.unassigned, 20 - handed);
}

TEST(Coordinate, TheAbBudgetIsTheWholeRunsOverEveryWorker) {
  std::vector<CoordinatorChannel> channels(3);
  std::atomic<int> granted{0}, denied{0};
  const Served served = Serve(
      3, PlannedItems(10),
      [&](int w, const WorkItem&, const Report& report) {
        for (int k = 0; k < 2; ++k) {
          (channels[static_cast<std::size_t>(w)].GrantAb() ? granted : denied)++;
          ReportCase(report, "c", false);
        }
        return true;
      },
      {nullptr, 0, 7}, &channels);
  EXPECT_EQ(granted.load(), 7);
  EXPECT_EQ(denied.load(), 20 - 7);
  EXPECT_EQ(served.ab_granted, 7);
  EXPECT_EQ(served.unassigned, 0);
}

TEST(Coordinate, AChunkedOperatorsFailureOfAKindIsReRunOnceOverItsChunks) {
  // Ten items are ten chunks of one operator on three workers; each chunk
  // fails two kinds. The first ask of a kind is granted (its case noted), every later one is
  // told to inherit that case's class; a budget-only ask (no operator) is not shared.
  std::vector<CoordinatorChannel> channels(3);
  std::mutex mutex;
  std::map<std::string, std::vector<std::string>> answers;  // kind -> granted case or "<-" from
  std::atomic<int> budget_only{0};
  const Served served = Serve(
      3, PlannedItems(10),
      [&](int w, const WorkItem& item, const Report& report) {
        CoordinatorChannel& channel = channels[static_cast<std::size_t>(w)];
        for (const std::string kind : {"float32 allclose", "float16 allclose"}) {
          const std::string id = "op/#" + std::to_string(item.id) + " " + kind;
          const AbAnswer answer = channel.AskAb({"op", kind, id});
          const std::lock_guard<std::mutex> lock(mutex);
          answers[kind].push_back(answer.granted ? id : "<-" + answer.inherit_from);
        }
        budget_only += channel.GrantAb() ? 1 : 0;
        ReportCase(report, "c" + std::to_string(item.id), false);
        return true;
      },
      {nullptr, 0, -1}, &channels);
  for (const auto& [kind, got] : answers) {
    ASSERT_EQ(got.size(), 10u) << kind;
    const auto granted = std::count_if(got.begin(), got.end(),
                                       [](const std::string& a) { return a.rfind("<-", 0) != 0; });
    EXPECT_EQ(granted, 1) << kind;
    const std::string first = *std::find_if(
        got.begin(), got.end(), [](const std::string& a) { return a.rfind("<-", 0) != 0; });
    EXPECT_EQ(std::count(got.begin(), got.end(), "<-" + first), 9) << kind;
  }
  EXPECT_EQ(budget_only.load(), 10);
  EXPECT_EQ(served.ab_granted, 2 + 10);
  EXPECT_EQ(served.ab_shared, 18);
}

TEST(Coordinate, AChunkedOperatorsSharedAbStillTakesTheBudget) {
  // --max-ab 1: the first kind's A/B takes it; its later chunks inherit (no
  // budget needed), the second kind is refused for every chunk.
  std::vector<CoordinatorChannel> channels(2);
  std::atomic<int> inherited{0}, granted{0}, refused{0};
  Serve(
      2, PlannedItems(4),
      [&](int w, const WorkItem& item, const Report& report) {
        CoordinatorChannel& channel = channels[static_cast<std::size_t>(w)];
        for (const std::string k : {"a", "b"}) {
          const AbAnswer answer = channel.AskAb({"op", k, std::to_string(item.id)});
          (answer.granted ? granted : !answer.inherit_from.empty() ? inherited : refused)++;
        }
        ReportCase(report, "c", false);
        return true;
      },
      {nullptr, 0, 1}, &channels);
  EXPECT_EQ(granted.load(), 1);
  EXPECT_EQ(inherited.load(), 3);
  EXPECT_EQ(refused.load(), 4);
}

TEST(Coordinate, FewerFailuresThanTheLimitRunEverything) {
  const Served served = Serve(2, PlannedItems(6),
                              [](int, const WorkItem& item, const Report& report) {
                                ReportCase(report, std::to_string(item.id), item.id % 2 == 0);
                                return true;
                              },
                              {nullptr, 4});
  EXPECT_FALSE(served.max_failures_reached);
  EXPECT_EQ(served.failed, 3);
  EXPECT_EQ(served.unassigned, 0);
}

TEST(Coordinate, AResumedRunFinishesWhatAStoppedRunLeftAndRunsNothingTwice) {
  // Three sweeps of 5 cases, cut into items of at most 2; the first run is
  // stopped after 6 cases, the second (--resume) plans every item again and
  // skips the stored cases, as the worker does.
  const std::vector<OperatorShape> ops = {{"a", 5}, {"b", 5}, {"c", 5}};
  const std::vector<WorkItem> items =
      PlanWork(ops, {{"a", 1.0}, {"b", 3.0}, {"c", 2.0}}, {SchedulePolicy::kFifo, 1, 2});
  ASSERT_EQ(items.size(), 9u);
  std::map<std::string, int> stored;  // case id -> times stored
  std::mutex mutex;
  auto run = [&](std::atomic<int>* stop, int stop_after) {
    return [&, stop, stop_after](int, const WorkItem& item, const Report& report) {
      for (int index : item.case_indices) {
        const std::string id =
            ops[static_cast<std::size_t>(item.op_index)].name + "/" + std::to_string(index);
        std::lock_guard<std::mutex> lock(mutex);
        if (stored.count(id) > 0 || (stop != nullptr && stop->load() != 0)) continue;
        ++stored[id];
        ReportCase(report, id, true);
        if (static_cast<int>(stored.size()) == stop_after) stop->store(10);
      }
      return true;
    };
  };

  std::atomic<int> stop{0};
  const Served first = Serve(2, items, run(&stop, 6), {&stop});
  EXPECT_EQ(first.cases, 6);
  EXPECT_GT(first.unassigned, 0);
  const Served resumed = Serve(2, items, run(nullptr, -1));
  EXPECT_TRUE(resumed.healthy);
  EXPECT_EQ(resumed.AllItems(), Iota(9));
  EXPECT_EQ(resumed.cases, 15 - 6);
  EXPECT_EQ(stored.size(), 15u);
  for (const auto& [id, times] : stored) EXPECT_EQ(times, 1) << id;
}

TEST(Coordinate, TheProgressHearsEveryCaseAndItemSummary) {
  const int n = 8;
  const Served served =
      Serve(3, PlannedItems(n), [](int, const WorkItem& item, const Report& report) {
        for (int k = 0; k < 3; ++k)
          ReportCase(report, std::to_string(item.id) + "/" + std::to_string(k), k != 2);
        report({{"kind", "bench"}, {"shapes", 2}, {"bench_ms", 500.0}});
        report({{"kind", "item"}, {"item_ms", 1000.0}});
        return true;
      });
  EXPECT_TRUE(served.healthy);
  EXPECT_EQ(served.cases, 3 * n);
  EXPECT_EQ(served.failed, n);
  EXPECT_NEAR(served.case_s, 3 * n * 0.010, 1e-9);
  EXPECT_EQ(served.shapes_benched, 2 * n);
  EXPECT_DOUBLE_EQ(served.bench_s, n * 0.5);
  EXPECT_DOUBLE_EQ(served.item_s, n * 1.0);
  EXPECT_NE(served.progress_text.find("[24/24 100.0%] 8 failed"), std::string::npos)
      << served.progress_text;
}

TEST(Coordinate, WithNothingToDoEveryWorkerIsToldToStop) {
  const Served served = Serve(3, {}, [](int, const WorkItem&, const Report&) {
    ADD_FAILURE() << "no item to run";
    return true;
  });
  EXPECT_TRUE(served.healthy);
  EXPECT_EQ(served.unassigned, 0);
  EXPECT_TRUE(served.AllItems().empty());
}

// Serve(...) on a thread of its own, given `limit_s` to return: a
// coordinator that waits for ever for a worker ends the test program with a
// failure instead of hanging it.
Served ServeWithin(double limit_s, const std::function<Served()>& serve) {
  auto done = std::make_shared<std::promise<Served>>();
  std::future<Served> served = done->get_future();
  std::thread([done, serve] { done->set_value(serve()); }).detach();
  if (served.wait_for(std::chrono::duration<double>(limit_s)) != std::future_status::ready) {
    std::fprintf(stderr, "FAILED: the coordinator still waits after %.0f s: a hang\n", limit_s);
    std::fflush(stderr);
    std::_Exit(1);
  }
  return served.get();
}

constexpr double kHangLimitS = 30;

// `items` items of nothing to do, each worker's thread doing `body`, within kHangLimitS.
Served ServeWithBody(int workers, int items, WorkerBody body) {
  return ServeWithin(kHangLimitS, [&] {
    return Serve(
        workers, PlannedItems(items), [](int, const WorkItem&, const Report&) { return true; }, {},
        nullptr, body);
  });
}

TEST(Coordinate, AWorkerWhoseItemThrowsLeavesNamingItAndTheOthersFinishTheRest) {
  const std::vector<WorkItem> items = PlannedItems(15);
  const Served served = ServeWithin(kHangLimitS, [&] {
    FirstItemGate gate(3);
    return Serve(3, items, [&](int worker, const WorkItem& item, const Report& report) {
      EXPECT_TRUE(gate.Pass(worker));
      ReportCase(report, "case" + std::to_string(item.id), true);
      if (worker == 1) throw std::runtime_error("the shard's disk is gone");
      return true;
    });
  });
  EXPECT_FALSE(served.healthy);
  ASSERT_EQ(served.departures.size(), 1u);
  const WorkerDeparture& left = served.departures[0];
  EXPECT_EQ(left.rank, 1);
  EXPECT_NE(left.reason.find("threw: the shard's disk is gone"), std::string::npos) << left.reason;
  ASSERT_EQ(served.items_of[1].size(), 1u);
  ASSERT_TRUE(left.lost_item.has_value());
  EXPECT_EQ(left.lost_item->id, served.items_of[1][0]);
  // Every other item was run by the two that stayed; none is left unassigned.
  EXPECT_EQ(served.unassigned, 0);
  EXPECT_EQ(served.AllItems(), Iota(15));
  EXPECT_EQ(served.cases, 15);  // the lost item's case was reported before it threw
}

TEST(Coordinate, RankZerosOwnWorkerThrowingEndsTheRunWithTheRestUnassigned) {
  const Served served = ServeWithin(kHangLimitS, [&] {
    return Serve(1, PlannedItems(10), [](int, const WorkItem& item, const Report&) -> bool {
      if (item.id == 2) throw std::logic_error("item 2 cannot be run");
      return true;
    });
  });
  EXPECT_FALSE(served.healthy);
  EXPECT_EQ(served.items_of[0], (std::vector<int>{0, 1, 2}));
  ASSERT_EQ(served.departures.size(), 1u);
  EXPECT_EQ(served.departures[0].rank, 0);
  ASSERT_TRUE(served.departures[0].lost_item.has_value());
  EXPECT_EQ(served.departures[0].lost_item->id, 2);
  EXPECT_EQ(served.unassigned, 7);
}

TEST(Coordinate, AWorkerThatLeavesBeforeItsLoopIsNotWaitedFor) {
  // Worker 2's set-up failed (as a rank whose shard cannot be created): it
  // says so and returns without ever asking for work.
  const Served served = ServeWithBody(
      3, 9, [](int w, Comm* link, const RunItemFunction& run, CoordinatorChannel* channel) {
        if (w == 2) return LeaveWork(link, 0, "its shard cannot be created");
        WorkerLoop(link, 0, run, channel);
      });
  EXPECT_FALSE(served.healthy);
  ASSERT_EQ(served.departures.size(), 1u);
  EXPECT_EQ(served.departures[0].rank, 2);
  EXPECT_EQ(served.departures[0].reason, "its shard cannot be created");
  EXPECT_FALSE(served.departures[0].lost_item.has_value());
  EXPECT_TRUE(served.items_of[2].empty());
  EXPECT_EQ(served.AllItems(), Iota(9));
  EXPECT_EQ(served.unassigned, 0);
}

TEST(Coordinate, AWorkerAnsweredWithNeitherWorkNorTheStopLeavesAndItsItemIsLost) {
  // Worker 1 asks for an A/B re-run outside any item: the grant comes where
  // it waits for work, so it leaves; the item handed to it meanwhile is lost.
  // Worker 0 starts only once worker 1 has left (else, on a loaded machine,
  // it could run all six items before worker 1's word reaches rank 0).
  std::atomic<bool> left{false};
  const Served served = ServeWithBody(
      2, 6, [&left](int w, Comm* link, const RunItemFunction& run, CoordinatorChannel* channel) {
        if (w == 1) {
          SendOrLog(link, 0, kTagAbAsk, "", "an A/B request");
          WorkerLoop(link, 0, run, channel);
          left = true;
          return;
        }
        while (!left) std::this_thread::yield();
        WorkerLoop(link, 0, run, channel);
      });
  EXPECT_FALSE(served.healthy);
  ASSERT_EQ(served.departures.size(), 1u);
  EXPECT_EQ(served.departures[0].rank, 1);
  EXPECT_NE(served.departures[0].reason.find("message tag 9"), std::string::npos)
      << served.departures[0].reason;
  ASSERT_TRUE(served.departures[0].lost_item.has_value());
  EXPECT_TRUE(served.items_of[1].empty());
  // Worker 0 ran every item but the lost one.
  std::vector<int> expected = Iota(6);
  expected.erase(std::find(expected.begin(), expected.end(), served.departures[0].lost_item->id));
  EXPECT_EQ(served.items_of[0], expected);
  EXPECT_EQ(served.unassigned, 0);
}

// A request for work that cannot be sent has no answer to wait for: the
// worker stops (it used to wait for ever) and the failed send is logged.
TEST(WorkerLoop, AWorkerThatCannotAskForWorkStopsInsteadOfWaiting) {
  std::vector<std::unique_ptr<Comm>> world = MakeLocalComms(1);
  bool ran = false;
  const RunItemFunction run = [&](const WorkItem&,
                                  const std::function<void(const nlohmann::json&)>&) {
    ran = true;
    return true;
  };
  WorkerLoop(world[0].get(), /*coordinator_rank=*/3, run);
  EXPECT_FALSE(ran);
  EXPECT_FALSE(SendOrLog(world[0].get(), 3, kTagRequest, "", "a request for work"));
}

TEST(WorkItem, TravelsAsJsonUnchanged) {
  const WorkItem item{7, 3, {4, 5, 6}, 2.5};
  const WorkItem back = WorkItemFromJson(nlohmann::json::parse(WorkItemToJson(item).dump()));
  EXPECT_EQ(back.id, 7);
  EXPECT_EQ(back.op_index, 3);
  EXPECT_EQ(back.case_indices, (std::vector<int>{4, 5, 6}));
  EXPECT_DOUBLE_EQ(back.expected_s, 2.5);
}

}  // namespace
}  // namespace opverify
