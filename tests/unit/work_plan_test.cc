// Sharding a job (--shard I/N, one Slurm array task's part): the parse and
// the rule that the N shards cover every operator exactly once.
#include "runner/batch/work_plan.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace opverify
