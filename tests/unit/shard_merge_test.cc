// MergeShards: the shards of run folders that ran one job apart (the
// `--shard I/N` parts of a Slurm job array) joined in one run folder, read
// back as if one run had written them.
#include "runner/store/shard_merge.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/h5/h5.h"
#include "runner/store/run_records.h"
#include "runner/store/shard_writer.h"
#include "tests/unit/shard_fixture.h"

namespace opverify {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Ids;
using testing::MakeSampleCase;
using testing::SampleCase;

std::vector<std::string> FileNames(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class ShardMergeTest : public testing::ShardTest {
 protected:
  void SetUp() override {
    ShardTest::SetUp();
    part_a_ = dir_ + "/a";
    part_b_ = dir_ + "/b";
    merged_ = dir_ + "/merged";
    // Part a: rank 0 in two sessions (resumed); part b: ranks 0 and 1.
    for (int session = 0; session < 2; ++session) {
      std::unique_ptr<ShardWriter> writer = Writer(0, StorePolicy::kAll, part_a_);
      ASSERT_NE(writer, nullptr);
      AppendSamples(writer.get(), 0, session * 10, 2);
    }
    for (int rank = 0; rank < 2; ++rank) {
      std::unique_ptr<ShardWriter> writer = Writer(rank, StorePolicy::kAll, part_b_);
      ASSERT_NE(writer, nullptr);
      AppendSamples(writer.get(), rank, 100 + rank * 10, 1);
    }
  }

  std::string part_a_, part_b_, merged_;
};

TEST_F(ShardMergeTest, EachPartsShardBecomesALaterSessionOfItsRank) {
  const Status merged = MergeShards(merged_, {part_a_, part_b_});
  ASSERT_TRUE(merged.ok()) << merged.ToString();
  EXPECT_THAT(FileNames(merged_ + "/shards"),
              ElementsAre("merged_from.json", "rank-0000.1.h5", "rank-0000.2.h5", "rank-0000.h5",
                          "rank-0000.journal", "rank-0001.h5", "rank-0001.journal"));
  // The records of both parts, the journal lines renamed with their shards.
  EXPECT_THAT(Ids(Records(merged_)),
              ElementsAre("op0/case-0000", "op1/case-0001", "op1/case-0010", "op2/case-0011",
                          "op1/case-0100", "op2/case-0110"));
  EXPECT_EQ(Records(merged_)[4].stored_at, "shards/rank-0000.2.h5:/cases/000000");

  std::ifstream in(merged_ + "/shards/merged_from.json");
  const nlohmann::json from = nlohmann::json::parse(in);
  ASSERT_EQ(from.size(), 4u);
  EXPECT_EQ(from[2]["part"], fs::absolute(part_b_).lexically_normal().string());
  EXPECT_EQ(from[2]["shard"], "rank-0000.h5");
  EXPECT_EQ(from[2]["as"], "rank-0000.2.h5");

  // A merged shard keeps its root attributes: `shard` is its k in its part.
  Result<h5::Handle> file =
      h5::OpenFile(merged_ + "/shards/rank-0000.1.h5", h5::FileMode::kReadOnly);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(h5::ReadIntAttribute(file->id(), "shard").value(), std::optional<std::int64_t>(1));
}

TEST_F(ShardMergeTest, MergingAgainReplacesTheEarlierMerge) {
  ASSERT_TRUE(MergeShards(merged_, {part_a_, part_b_}).ok());
  const Status again = MergeShards(merged_, {part_b_});
  ASSERT_TRUE(again.ok()) << again.ToString();
  EXPECT_THAT(Ids(Records(merged_)), ElementsAre("op1/case-0100", "op2/case-0110"));
  for (const std::string& name : FileNames(merged_)) {
    EXPECT_THAT(name, ::testing::Not(HasSubstr("shards.")));  // nothing left over
  }
}

TEST_F(ShardMergeTest, ARunFolderABatchWroteIsRefused) {
  const Status refused = MergeShards(part_a_, {part_b_});
  EXPECT_EQ(refused.code(), Status::Code::kInvalidInput);
  EXPECT_THAT(refused.message(), HasSubstr("not of a merge"));
  EXPECT_THAT(Ids(Records(part_a_)),
              ElementsAre("op0/case-0000", "op1/case-0001", "op1/case-0010", "op2/case-0011"));
  EXPECT_EQ(MergeShards(merged_, {dir_ + "/nowhere"}).code(), Status::Code::kNotFound);
}

TEST_F(ShardMergeTest, ACaseInSeveralPartsKeepsItsLatestRecord) {
  // Case 3 failed in part b, then ran again (and passed) in part c, which
  // comes first in the merge: the later shard wins, not the later part.
  const SampleCase failed = MakeSampleCase(3, 1);
  std::unique_ptr<ShardWriter> in_b = Writer(1, StorePolicy::kAll, part_b_);
  ASSERT_NE(in_b, nullptr);
  ASSERT_TRUE(in_b->Append(failed.record).ok());
  SampleCase again = MakeSampleCase(3, 0);
  again.record.passed = true;
  again.record.error_type = "";
  const std::string part_c = dir_ + "/c";
  std::unique_ptr<ShardWriter> in_c = Writer(0, StorePolicy::kAll, part_c);
  ASSERT_NE(in_c, nullptr);
  ASSERT_TRUE(in_c->Append(again.record).ok());

  ASSERT_TRUE(MergeShards(merged_, {part_c, part_b_}).ok());
  const std::vector<CaseRecord> records = Records(merged_);
  EXPECT_THAT(Ids(records), ElementsAre("op0/case-0003", "op1/case-0100", "op2/case-0110"));
  ASSERT_FALSE(records.empty());
  EXPECT_TRUE(records[0].passed);
  EXPECT_EQ(records[0].rank, 0);
}

TEST_F(ShardMergeTest, AJournaledShardAPartLacksIsAnErrorOrAListedProblem) {
  fs::remove(part_b_ + "/shards/rank-0001.h5");
  const Status strict = MergeShards(merged_, {part_a_, part_b_});
  ASSERT_FALSE(strict.ok());
  EXPECT_THAT(strict.message(), HasSubstr("rank-0001.h5: journaled case op2/case-0110"));
  std::vector<std::string> problems;
  const Status lenient = MergeShards(merged_, {part_a_, part_b_}, &problems);
  ASSERT_TRUE(lenient.ok()) << lenient.ToString();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0], HasSubstr("no such shard"));
  EXPECT_THAT(Ids(Records(merged_)),
              ElementsAre("op0/case-0000", "op1/case-0001", "op1/case-0010", "op2/case-0011",
                          "op1/case-0100"));
}

}  // namespace
}  // namespace opverify
