// Parts of a job (--part I/N, one Slurm array task's part): the parse and
// the rule that the N parts cover every operator exactly once; choosing the
// operators (--part, --filter); cutting and ordering the work items.
#include "runner/scheduler/work_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace opverify {
namespace {

TEST(ParseManifestPart, AcceptsIOfN) {
  const std::optional<ManifestPart> part = ParseManifestPart("2/5");
  ASSERT_TRUE(part.has_value());
  EXPECT_EQ(part->index, 2);
  EXPECT_EQ(part->count, 5);
  ASSERT_TRUE(ParseManifestPart("0/1").has_value());
}

TEST(ParseManifestPart, RefusesAnythingElse) {
  for (const std::string bad : {"", "1", "/", "1/", "/2", "2/2", "3/2", "0/0", "-1/2", "1/-2",
                                " 1/2", "1/2 ", "1.0/2", "a/b", "1/2/3", "0x1/2", "1/9999999999"}) {
    EXPECT_FALSE(ParseManifestPart(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(InManifestPart, ThePartsOfAJobCoverEachOperatorExactlyOnce) {
  for (int count : {1, 2, 3, 7}) {
    for (int op = 0; op < 50; ++op) {
      int owners = 0;
      for (int index = 0; index < count; ++index)
        owners += InManifestPart(op, ManifestPart{index, count}) ? 1 : 0;
      EXPECT_EQ(owners, 1) << "operator " << op << " of " << count << " parts";
    }
  }
}

TEST(InManifestPart, KeepsTheOperatorsWhosePositionIsIModuloN) {
  std::vector<int> kept;
  for (int op = 0; op < 10; ++op) {
    if (InManifestPart(op, ManifestPart{1, 3})) kept.push_back(op);
  }
  EXPECT_EQ(kept, (std::vector<int>{1, 4, 7}));
}

TEST(SelectOperators, KeepsEveryOperatorWithoutPartOrFilter) {
  EXPECT_EQ(SelectOperators({"add", "mul", "softmax"}, "", std::nullopt),
            (std::vector<int>{0, 1, 2}));
}

TEST(SelectOperators, FilterIsAGlobOverNames) {
  const std::vector<std::string> names = {"add", "softmax", "log_softmax", "matmul", "soft_plus"};
  EXPECT_EQ(SelectOperators(names, "*softmax", std::nullopt), (std::vector<int>{1, 2}));
  EXPECT_EQ(SelectOperators(names, "soft*", std::nullopt), (std::vector<int>{1, 4}));
  EXPECT_EQ(SelectOperators(names, "add", std::nullopt), (std::vector<int>{0}));
  EXPECT_TRUE(SelectOperators(names, "conv*", std::nullopt).empty());
}

TEST(SelectOperators, ThePartCountsPositionsBeforeTheFilter) {
  const std::vector<std::string> names = {"a1", "b1", "a2", "b2", "a3", "b3"};
  // Part 0/2 holds positions 0, 2, 4 whatever the filter: a1, a2, a3.
  EXPECT_EQ(SelectOperators(names, "", ManifestPart{0, 2}), (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(SelectOperators(names, "a*", ManifestPart{0, 2}), (std::vector<int>{0, 2, 4}));
  EXPECT_TRUE(SelectOperators(names, "b*", ManifestPart{0, 2}).empty());
  EXPECT_EQ(SelectOperators(names, "*3", ManifestPart{1, 2}), (std::vector<int>{5}));
}

TEST(PlanWork, OneItemPerOperatorInManifestOrderWithoutTimings) {
  const std::vector<WorkItem> items =
      PlanWork({{"a", 3}, {"b", 0}, {"c", 1}}, {}, {SchedulePolicy::kFifo, 1, 64});
  ASSERT_EQ(items.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(items[static_cast<std::size_t>(i)].id, i);
    EXPECT_EQ(items[static_cast<std::size_t>(i)].op_index, i);
    EXPECT_TRUE(
        items[static_cast<std::size_t>(i)].case_indices.empty());  // every case of the operator
  }
}

TEST(PlanWork, LongestExpectedFirstAndAnUntimedOperatorTakesTheMean) {
  // "new" has no earlier time: expected the mean 2 s, so between "slow" and "fast".
  const std::vector<WorkItem> items =
      PlanWork({{"fast", 1}, {"new", 1}, {"slow", 1}},
               {{"fast", 1.0}, {"slow", 3.0}, {"gone", 100.0}}, {SchedulePolicy::kFifo, 1, 64});
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].op_index, 2);
  EXPECT_EQ(items[1].op_index, 1);
  EXPECT_DOUBLE_EQ(items[1].expected_s, (1.0 + 3.0) / 2);
  EXPECT_EQ(items[2].op_index, 0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(items[static_cast<std::size_t>(i)].id, i);
}

TEST(PlanWork, TiesKeepManifestOrder) {
  const std::vector<WorkItem> items =
      PlanWork({{"a", 1}, {"b", 1}, {"c", 1}}, {{"a", 2.0}, {"b", 2.0}, {"c", 2.0}},
               {SchedulePolicy::kFifo, 1, 64});
  ASSERT_EQ(items.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(items[static_cast<std::size_t>(i)].op_index, i);
}

TEST(PlanWork, ALargeSweepIsCutIntoConsecutiveChunksThatCoverItOnce) {
  const std::vector<WorkItem> items = PlanWork(
      {{"big", 10}, {"small", 4}}, {{"big", 10.0}, {"small", 1.0}}, {SchedulePolicy::kFifo, 1, 4});
  // big: 0-3, 4-7, 8-9 (expected 4, 4, 2 s); small: one item of every case (1 s).
  ASSERT_EQ(items.size(), 4u);
  std::map<int, int> big_cases;
  for (const WorkItem& item : items) {
    if (item.op_index != 0) continue;
    EXPECT_LE(item.case_indices.size(), 4u);
    EXPECT_DOUBLE_EQ(item.expected_s, 10.0 * static_cast<double>(item.case_indices.size()) / 10);
    for (std::size_t k = 1; k < item.case_indices.size(); ++k) {
      EXPECT_EQ(item.case_indices[k], item.case_indices[k - 1] + 1);
    }
    for (int index : item.case_indices) ++big_cases[index];
  }
  ASSERT_EQ(big_cases.size(), 10u);
  for (const auto& [index, times] : big_cases) EXPECT_EQ(times, 1) << index;
  EXPECT_EQ(items.back().op_index, 1);
  EXPECT_TRUE(items.back().case_indices.empty());
  EXPECT_EQ(items[2].case_indices, (std::vector<int>{8, 9}));
}

// The cost-aware plan (--schedule cost, the default).

// Each operator's items' expected seconds, summed, by operator index.
std::map<int, double> ExpectedByOperator(const std::vector<WorkItem>& items) {
  std::map<int, double> seconds;
  for (const WorkItem& item : items) seconds[item.op_index] += item.expected_s;
  return seconds;
}

TEST(PlanWorkByCost, LongestPredictedFirst) {
  const std::vector<WorkItem> items =
      PlanWork({{"fast", 1}, {"slow", 1}, {"mid", 1}}, {{"fast", 1.0}, {"slow", 3.0}, {"mid", 2.0}},
               {SchedulePolicy::kCost, 2, 64});
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].op_index, 1);
  EXPECT_EQ(items[1].op_index, 2);
  EXPECT_EQ(items[2].op_index, 0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(items[static_cast<std::size_t>(i)].id, i);
}

TEST(PlanWorkByCost, OperatorsWithoutHistoryStartFirst) {
  // "new" is predicted small (one case), yet it goes before the timed ones:
  // how long it really takes is unknown, and it must not be the run's tail.
  const std::vector<WorkItem> items =
      PlanWork({{"old", 1}, {"new", 1}, {"older", 1}}, {{"old", 5.0}, {"older", 9.0}},
               {SchedulePolicy::kCost, 4, 64});
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].op_index, 1);
  EXPECT_EQ(items[1].op_index, 2);
  EXPECT_EQ(items[2].op_index, 0);
}

TEST(PlanWorkByCost, WithoutHistoryTheCasesPredictTheCost) {
  // Night one: nothing timed; the operator of 40 cases is the longest.
  const std::vector<OperatorShape> ops = {{"a", 2}, {"b", 40}, {"c", 5}};
  const std::vector<double> cost = PredictCost(ops, {});
  ASSERT_EQ(cost.size(), 3u);
  EXPECT_GT(cost[1], cost[2]);
  EXPECT_GT(cost[2], cost[0]);
  const std::vector<WorkItem> items = PlanWork(ops, {}, {SchedulePolicy::kCost, 1, 64});
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].op_index, 1);
  EXPECT_EQ(items[2].op_index, 0);
}

TEST(PlanWorkByCost, AnUntimedOperatorIsPredictedAtTheTimedOnesRatePerCase) {
  // "timed" took 30 s for 2 cases (+1 for its start-up): 10 s a unit; "new" has 5 cases: 60 s.
  const std::vector<double> cost = PredictCost({{"timed", 2}, {"new", 5}}, {{"timed", 30.0}});
  EXPECT_DOUBLE_EQ(cost[0], 30.0);
  EXPECT_DOUBLE_EQ(cost[1], 60.0);
}

TEST(PlanWorkByCost, LargerCasesWeighMore) {
  EXPECT_DOUBLE_EQ(CaseWeight(nlohmann::json::object()), 1.0);
  const double small = CaseWeight({{"shape", {64, 64}}, {"dtype", "float32"}});
  const double big = CaseWeight({{"shape", {4096, 4096}}, {"dtype", "float32"}});
  const double big_half = CaseWeight({{"shape", {4096, 4096}}, {"dtype", "float16"}});
  EXPECT_GT(big, big_half);
  EXPECT_GT(big_half, small);
  EXPECT_DOUBLE_EQ(big, 1 + 4096.0 * 4096 * 4 / (64.0 * 1024 * 1024));
}

TEST(PlanWorkByCost, AnOperatorOverItsFairShareIsSplitIntoChunksThatCoverItOnce) {
  // 8 ranks; "big" is 30% of the work: split into chunks of at most half a
  // rank's share, each of its cases in exactly one chunk.
  std::vector<OperatorShape> ops = {{"big", 60}};
  std::map<std::string, double> previous = {{"big", 30.0}};
  for (int i = 0; i < 70; ++i) {
    ops.push_back({"op" + std::to_string(i), 1});
    previous["op" + std::to_string(i)] = 1.0;
  }
  const std::vector<WorkItem> items = PlanWork(ops, previous, {SchedulePolicy::kCost, 8, 64});
  const double half_share = 100.0 / 8 / 2;
  std::map<int, int> covered;
  int chunks = 0;
  for (const WorkItem& item : items) {
    if (item.op_index != 0) {
      EXPECT_TRUE(item.case_indices.empty());
      continue;
    }
    ++chunks;
    EXPECT_LE(item.expected_s, half_share + 1e-9);
    EXPECT_EQ(item.chunks, 5);
    for (int index : item.case_indices) ++covered[index];
  }
  EXPECT_EQ(chunks, 5);
  ASSERT_EQ(covered.size(), 60u);
  for (const auto& [index, times] : covered) EXPECT_EQ(times, 1) << index;
  EXPECT_DOUBLE_EQ(ExpectedByOperator(items)[0], 30.0);
  EXPECT_EQ(items[0].op_index, 0);  // the chunks first: each is longer than any other item
}

TEST(PlanWorkByCost, OnNightOneAnOperatorOverHalfAShareIsSplit) {
  // perf/schedule_tail.py's night one: no history; "big" has 60 cases among 199 operators of 2:
  // 61 of 658 predicted units, under a rank's share of 8 (82) but over half of it (41). Its cases
  // may each be far longer than the guess (they were: 30% of the night), so it is split in two;
  // the same operator, timed at the same cost, stays whole.
  std::vector<OperatorShape> ops = {{"big", 60}};
  for (int i = 0; i < 199; ++i) ops.push_back({"op" + std::to_string(i), 2});
  const std::vector<WorkItem> night_one = PlanWork(ops, {}, {SchedulePolicy::kCost, 8, 64});
  std::map<int, int> covered;
  int chunks = 0;
  for (const WorkItem& item : night_one) {
    if (item.op_index != 0) continue;
    ++chunks;
    for (int index : item.case_indices) ++covered[index];
  }
  EXPECT_EQ(chunks, 2);
  EXPECT_EQ(covered.size(), 60u);
  std::map<std::string, double> previous;
  for (const OperatorShape& op : ops) previous[op.name] = 1.0 + op.known_cases;
  const std::vector<WorkItem> timed = PlanWork(ops, previous, {SchedulePolicy::kCost, 8, 64});
  EXPECT_EQ(timed.size(), ops.size());
}

TEST(PlanWorkByCost, AnUnknownCountOrASingleCaseIsNeverSplit) {
  const std::vector<WorkItem> items =
      PlanWork({{"own", 0}, {"one", 1}, {"x", 1}}, {{"own", 50.0}, {"one", 50.0}, {"x", 1.0}},
               {SchedulePolicy::kCost, 8, 64});
  ASSERT_EQ(items.size(), 3u);
  for (const WorkItem& item : items) {
    EXPECT_TRUE(item.case_indices.empty());
    EXPECT_EQ(item.chunks, 1);
  }
}

TEST(PlanWorkByCost, OneRankSplitsOnlyByMaxCasesPerItem) {
  const std::vector<WorkItem> items =
      PlanWork({{"big", 10}, {"small", 1}}, {}, {SchedulePolicy::kCost, 1, 4});
  EXPECT_EQ(items.size(), 4u);  // big: 3 chunks of at most 4; small: 1
  for (const WorkItem& item : items) EXPECT_LE(item.case_indices.size(), 4u);
}

TEST(ParseSchedulePolicy, KnowsCostAndFifo) {
  EXPECT_EQ(ParseSchedulePolicy("cost"), SchedulePolicy::kCost);
  EXPECT_EQ(ParseSchedulePolicy("fifo"), SchedulePolicy::kFifo);
  EXPECT_FALSE(ParseSchedulePolicy("lpt").has_value());
}

}  // namespace
}  // namespace opverify
