// Sharding a job (--shard I/N, one Slurm array task's part): the parse and
// the rule that the N shards cover every operator exactly once; choosing the
// operators (--shard, --filter); cutting and ordering the work items.
#include "runner/scheduler/work_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace opverify {
namespace {

TEST(ParseShard, AcceptsIOfN) {
  const std::optional<Shard> shard = ParseShard("2/5");
  ASSERT_TRUE(shard.has_value());
  EXPECT_EQ(shard->index, 2);
  EXPECT_EQ(shard->count, 5);
  ASSERT_TRUE(ParseShard("0/1").has_value());
}

TEST(ParseShard, RefusesAnythingElse) {
  for (const std::string bad : {"", "1", "/", "1/", "/2", "2/2", "3/2", "0/0", "-1/2", "1/-2",
                                " 1/2", "1/2 ", "1.0/2", "a/b", "1/2/3", "0x1/2", "1/9999999999"}) {
    EXPECT_FALSE(ParseShard(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(InShard, TheShardsOfAJobCoverEachOperatorExactlyOnce) {
  for (int count : {1, 2, 3, 7}) {
    for (int op = 0; op < 50; ++op) {
      int owners = 0;
      for (int index = 0; index < count; ++index)
        owners += InShard(op, Shard{index, count}) ? 1 : 0;
      EXPECT_EQ(owners, 1) << "operator " << op << " of " << count << " shards";
    }
  }
}

TEST(InShard, KeepsTheOperatorsWhosePositionIsIModuloN) {
  std::vector<int> kept;
  for (int op = 0; op < 10; ++op) {
    if (InShard(op, Shard{1, 3})) kept.push_back(op);
  }
  EXPECT_EQ(kept, (std::vector<int>{1, 4, 7}));
}

TEST(SelectOperators, KeepsEveryOperatorWithoutShardOrFilter) {
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

TEST(SelectOperators, TheShardCountsPositionsBeforeTheFilter) {
  const std::vector<std::string> names = {"a1", "b1", "a2", "b2", "a3", "b3"};
  // Shard 0/2 holds positions 0, 2, 4 whatever the filter: a1, a2, a3.
  EXPECT_EQ(SelectOperators(names, "", Shard{0, 2}), (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(SelectOperators(names, "a*", Shard{0, 2}), (std::vector<int>{0, 2, 4}));
  EXPECT_TRUE(SelectOperators(names, "b*", Shard{0, 2}).empty());
  EXPECT_EQ(SelectOperators(names, "*3", Shard{1, 2}), (std::vector<int>{5}));
}

TEST(PlanWork, OneItemPerOperatorInManifestOrderWithoutTimings) {
  const std::vector<WorkItem> items = PlanWork({{"a", 3}, {"b", 0}, {"c", 1}}, {}, 64);
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
  const std::vector<WorkItem> items = PlanWork({{"fast", 1}, {"new", 1}, {"slow", 1}},
                                               {{"fast", 1.0}, {"slow", 3.0}, {"gone", 100.0}}, 64);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].op_index, 2);
  EXPECT_EQ(items[1].op_index, 1);
  EXPECT_DOUBLE_EQ(items[1].expected_s, (1.0 + 3.0) / 2);
  EXPECT_EQ(items[2].op_index, 0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(items[static_cast<std::size_t>(i)].id, i);
}

TEST(PlanWork, TiesKeepManifestOrder) {
  const std::vector<WorkItem> items =
      PlanWork({{"a", 1}, {"b", 1}, {"c", 1}}, {{"a", 2.0}, {"b", 2.0}, {"c", 2.0}}, 64);
  ASSERT_EQ(items.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(items[static_cast<std::size_t>(i)].op_index, i);
}

TEST(PlanWork, ALargeSweepIsCutIntoConsecutiveChunksThatCoverItOnce) {
  const std::vector<WorkItem> items =
      PlanWork({{"big", 10}, {"small", 4}}, {{"big", 10.0}, {"small", 1.0}}, 4);
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

}  // namespace
}  // namespace opverify
