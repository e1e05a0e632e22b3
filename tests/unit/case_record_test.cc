// Record kinds: the names they are stored under (the strings runs have
// always written in a record's `extra`), and records of every kind written
// to a shard and read back as the kind they were.
#include "runner/store/case_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/h5/h5.h"
#include "runner/store/run_records.h"
#include "runner/store/shard_writer.h"
#include "tests/unit/shard_fixture.h"

namespace opverify {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Ids;
using testing::MakeSampleCase;
using testing::SampleCase;
using testing::ShardTest;

constexpr RecordKind kEveryKind[] = {RecordKind::kCase, RecordKind::kOperator,
                                     RecordKind::kBenchItem, RecordKind::kBenchShape};

TEST(RecordKindTest, EveryKindParsesBackFromItsName) {
  for (RecordKind kind : kEveryKind) {
    EXPECT_EQ(ParseRecordKind(RecordKindName(kind)), kind) << RecordKindName(kind);
  }
}

TEST(RecordKindTest, NamesAreTheStringsStoredRunsHold) {
  EXPECT_EQ(RecordKindName(RecordKind::kOperator), "operator");
  EXPECT_EQ(RecordKindName(RecordKind::kBenchItem), "bench_item");
  EXPECT_EQ(RecordKindName(RecordKind::kBenchShape), "bench_shape");
  for (const char* name : {"", "Operator", "bench", "item", "bench_shape "}) {
    EXPECT_EQ(ParseRecordKind(name), std::nullopt) << "'" << name << "'";
  }
}

// The `extra` attribute of /cases/<n> in `shard`, as stored.
json StoredExtraOf(const std::string& shard, int n) {
  Result<h5::Handle> file = h5::OpenFile(shard, h5::FileMode::kReadOnly);
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  if (!file.ok()) return nullptr;
  Result<h5::Handle> group = h5::OpenGroup(file->id(), "/cases/00000" + std::to_string(n));
  EXPECT_TRUE(group.ok()) << group.status().ToString();
  if (!group.ok()) return nullptr;
  Result<std::optional<std::string>> text = h5::ReadStringAttribute(group->id(), "extra");
  EXPECT_TRUE(text.ok() && text->has_value());
  return text.ok() && text->has_value() ? json::parse(*text.value()) : json(nullptr);
}

// Overwrites the `extra` attribute of /cases/<n> in `shard`.
void StoreExtra(const std::string& shard, int n, const json& extra) {
  Result<h5::Handle> file = h5::OpenFile(shard, h5::FileMode::kReadWrite);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  Result<h5::Handle> group = h5::OpenGroup(file->id(), "/cases/00000" + std::to_string(n));
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  ASSERT_TRUE(h5::WriteStringAttribute(group->id(), "extra", extra.dump()).ok());
}

// A record of `kind`: a sample case, or a fact record shaped as opverify-batch writes one.
SampleCase RecordOfKind(RecordKind kind) {
  SampleCase sample = MakeSampleCase(0, 0);
  if (kind == RecordKind::kCase) return sample;
  CaseRecord& r = sample.record;
  r.kind = kind;
  r.case_id = "op0/@" + std::string(RecordKindName(kind));
  r.case_index = -1;
  r.outputs = json::array();
  r.tensors.clear();
  r.extra = {{"case_id", "op0/case-0000"}, {"wall_s", 1.5}};
  return sample;
}

TEST_F(ShardTest, EachKindReadsBackAsItWasWritten) {
  std::unique_ptr<ShardWriter> writer = Writer(0);
  ASSERT_NE(writer, nullptr);
  for (RecordKind kind : kEveryKind) {
    Status appended = writer->Append(RecordOfKind(kind).record);
    ASSERT_TRUE(appended.ok()) << appended.ToString();
  }
  const std::vector<CaseRecord> records = Records();
  ASSERT_EQ(records.size(), std::size(kEveryKind));
  for (std::size_t i = 0; i < records.size(); ++i) {
    const CaseRecord expected = RecordOfKind(kEveryKind[i]).record;
    EXPECT_EQ(records[i].kind, kEveryKind[i]) << expected.case_id;
    EXPECT_EQ(records[i].case_id, expected.case_id);
    EXPECT_EQ(records[i].case_index, expected.case_index);
    EXPECT_EQ(records[i].extra, expected.extra) << expected.case_id;  // without "kind"
  }
}

TEST_F(ShardTest, AKindIsStoredAsTheExtraKindOlderRunsWrote) {
  std::unique_ptr<ShardWriter> writer = Writer(0);
  ASSERT_NE(writer, nullptr);
  for (RecordKind kind : kEveryKind) {
    ASSERT_TRUE(writer->Append(RecordOfKind(kind).record).ok());
  }
  EXPECT_FALSE(StoredExtraOf(writer->path(), 0).contains("kind"));  // a case has none
  EXPECT_EQ(StoredExtraOf(writer->path(), 1)["kind"], "operator");
  EXPECT_EQ(StoredExtraOf(writer->path(), 2)["kind"], "bench_item");
  EXPECT_EQ(StoredExtraOf(writer->path(), 3)["kind"], "bench_shape");

  // As a run before RecordKind wrote it: the kind among the other keys.
  StoreExtra(writer->path(), 3,
             {{"kind", "bench_shape"}, {"case_id", "op0/case-0000"}, {"shape", {{"passed", true}}}});
  const std::vector<CaseRecord> records = Records();
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[3].kind, RecordKind::kBenchShape);
  EXPECT_EQ(records[3].extra, (json{{"case_id", "op0/case-0000"}, {"shape", {{"passed", true}}}}));
}

TEST_F(ShardTest, AnUnknownKindIsAnErrorOrAListedProblem) {
  std::unique_ptr<ShardWriter> writer = Writer(0);
  ASSERT_NE(writer, nullptr);
  AppendSamples(writer.get(), 0, 0, 2);
  StoreExtra(writer->path(), 1, {{"kind", "bench_round"}});

  Result<std::vector<CaseRecord>> strict = ReadRunRecords(dir_);
  ASSERT_FALSE(strict.ok());
  EXPECT_THAT(strict.status().message(), HasSubstr("shards/rank-0000.h5:/cases/000001"));
  EXPECT_THAT(strict.status().message(), HasSubstr("\"bench_round\" is no record kind"));
  std::vector<std::string> problems;
  Result<std::vector<CaseRecord>> lenient = ReadRunRecords(dir_, &problems);
  ASSERT_TRUE(lenient.ok());
  EXPECT_THAT(Ids(lenient.value()), ElementsAre("op0/case-0000"));
  EXPECT_EQ(problems.size(), 1u);
}

TEST_F(ShardTest, AppendRefusesAnExtraHoldingKind) {
  std::unique_ptr<ShardWriter> writer = Writer(0);
  ASSERT_NE(writer, nullptr);
  SampleCase sample = MakeSampleCase(0, 0);
  sample.record.extra["kind"] = "operator";
  const Status appended = writer->Append(sample.record);
  EXPECT_EQ(appended.code(), Status::Code::kInvalidInput);
  EXPECT_THAT(appended.message(), HasSubstr("op0/case-0000"));
  EXPECT_TRUE(Records().empty());
  // The writer is not broken by a refused record.
  AppendSamples(writer.get(), 0, 1, 1);
  EXPECT_THAT(Ids(Records()), ElementsAre("op1/case-0001"));
}

}  // namespace
}  // namespace opverify
