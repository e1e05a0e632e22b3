// The HDF5 result store: cases written to a rank's shard and read back field
// for field, the tensor policies, resume into a new shard file, the journal,
// results.h5, and real failures: a full tmpfs, a file-size limit, and a
// writer process killed with SIGKILL mid-run.
#include "runner/store/shard_writer.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runner/process/channel.h"
#include "runner/process/subprocess.h"
#include "runner/h5/h5.h"
#include "runner/store/journal.h"
#include "runner/store/results_index.h"
#include "runner/store/shard_files.h"
#include "runner/store/run_records.h"
#include "runner/store/tensor_storage.h"
#include "runner/tensor_io/h5_tensor.h"
#include "runner/tensor_io/tensor_file.h"
#include "tests/unit/shard_fixture.h"
#include "tests/unit/shard_sample_case.h"

namespace opverify {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Ids;
using testing::MakeSampleCase;
using testing::SampleCase;
using testing::ShardTest;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> ShardFiles(const std::string& run_dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(run_dir + "/shards")) {
    names.insert(entry.path().filename().string());
  }
  return {names.begin(), names.end()};
}

std::int64_t TableRows(const std::string& file, const std::string& table) {
  Result<h5::Handle> h5_file = h5::OpenFile(file, h5::FileMode::kReadOnly);
  EXPECT_TRUE(h5_file.ok()) << h5_file.status().ToString();
  if (!h5_file.ok()) return -1;
  Result<h5::Handle> dataset = h5::OpenDataset(h5_file->id(), table);
  EXPECT_TRUE(dataset.ok()) << dataset.status().ToString();
  if (!dataset.ok()) return -1;
  Result<std::vector<hsize_t>> dims = h5::DatasetDims(dataset->id());
  return dims.ok() && dims->size() == 1 ? static_cast<std::int64_t>(dims.value()[0]) : -1;
}

TEST_F(ShardTest, CasesReadBackWithEveryField) {
  std::unique_ptr<ShardWriter> writer = Writer(2);
  ASSERT_NE(writer, nullptr);
  EXPECT_EQ(writer->path(), Shard("rank-0002.h5"));
  AppendSamples(writer.get(), 2, 0, 4);

  const std::vector<CaseRecord> records = Records();
  ASSERT_EQ(records.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const CaseRecord& expected = MakeSampleCase(i, 2).record;
    const CaseRecord& got = records[static_cast<std::size_t>(i)];
    EXPECT_EQ(got.case_id, expected.case_id);
    EXPECT_EQ(got.op_name, expected.op_name);
    EXPECT_EQ(got.case_index, i);
    EXPECT_EQ(got.params, expected.params);
    EXPECT_EQ(got.input_desc, expected.input_desc);
    EXPECT_EQ(got.passed, expected.passed);
    EXPECT_EQ(got.route, expected.route);
    EXPECT_EQ(got.error_type, expected.error_type);
    EXPECT_EQ(got.error_msg, expected.error_msg);  // 5 KB, UTF-8, a newline
    EXPECT_EQ(got.outputs, expected.outputs);
    EXPECT_EQ(got.timings, expected.timings);
    EXPECT_EQ(got.rank, 2);
    EXPECT_EQ(got.device, "cpu");
    EXPECT_EQ(got.ab, expected.ab);
    EXPECT_EQ(got.extra, expected.extra);
    EXPECT_TRUE(got.tensors.empty());
    EXPECT_EQ(got.stored_at, "shards/rank-0002.h5:/cases/00000" + std::to_string(i));
  }
  EXPECT_FALSE(records[3].passed);
  EXPECT_EQ(records[3].ab["classification"], "real_defect");

  // The tensors, as the judge's tensor reader sees them: bfloat16 by its dtype attribute.
  Result<LoadedTensor> golden =
      ReadTensorFile(dir_ + "/" + records[3].stored_at + "/outputs/0/golden");
  ASSERT_TRUE(golden.ok()) << golden.status().ToString();
  EXPECT_EQ(golden->view.dtype, DType::kBFloat16);
  EXPECT_THAT(golden->view.shape, ElementsAre(4, 8));
  const SampleCase sample = MakeSampleCase(3, 2);
  EXPECT_EQ(std::memcmp(golden->view.data, sample.tensors[0].view().data, 64), 0);
  Result<LoadedTensor> actual =
      ReadTensorFile(dir_ + "/" + records[3].stored_at + "/outputs/1/actual");
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  EXPECT_EQ(actual->view.dtype, DType::kFloat32);
  EXPECT_EQ(std::memcmp(actual->view.data, sample.tensors[3].view().data, 16 * sizeof(float)), 0);

  EXPECT_EQ(TableRows(Shard("rank-0002.h5"), "/table"), 4);
  Result<h5::Handle> file = h5::OpenFile(Shard("rank-0002.h5"), h5::FileMode::kReadOnly);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(h5::ReadIntAttribute(file->id(), "rank").value(), std::optional<std::int64_t>(2));
  EXPECT_EQ(h5::ReadIntAttribute(file->id(), "format_version").value(),
            std::optional<std::int64_t>(kFormatVersion));
  EXPECT_EQ(h5::ReadStringAttribute(file->id(), "policy").value(),
            std::optional<std::string>("all"));
  Result<h5::Handle> group = h5::OpenGroup(file->id(), "/cases/000003");
  ASSERT_TRUE(group.ok());
  EXPECT_EQ(h5::ReadStringAttribute(group->id(), "verdict").value(),
            std::optional<std::string>("failed"));
}

TEST_F(ShardTest, PolicyDecidesWhichCasesKeepTensors) {
  for (StorePolicy policy : {StorePolicy::kAll, StorePolicy::kFailures, StorePolicy::kNone}) {
    SCOPED_TRACE(std::string(StorePolicyName(policy)));
    const std::string run_dir = dir_ + "/" + std::string(StorePolicyName(policy));
    std::unique_ptr<ShardWriter> writer = Writer(0, policy, run_dir);
    ASSERT_NE(writer, nullptr);
    AppendSamples(writer.get(), 0, 2, 2);  // case 2 passes, case 3 fails
    Result<h5::Handle> file = h5::OpenFile(writer->path(), h5::FileMode::kReadOnly);
    ASSERT_TRUE(file.ok());
    const bool passed_kept = h5::Exists(file->id(), "/cases/000000/outputs/1/actual").value();
    const bool failed_kept = h5::Exists(file->id(), "/cases/000001/outputs/1/actual").value();
    EXPECT_EQ(passed_kept, policy == StorePolicy::kAll);
    EXPECT_EQ(failed_kept, policy != StorePolicy::kNone);
  }
  EXPECT_EQ(ParseStorePolicy("failures"), StorePolicy::kFailures);
  EXPECT_EQ(ParseStorePolicy("some"), std::nullopt);
}

TEST_F(ShardTest, ANewWriterNeverAppendsToAnExistingShard) {
  for (int session = 0; session < 3; ++session) {
    std::unique_ptr<ShardWriter> writer = Writer(1);
    ASSERT_NE(writer, nullptr);
    AppendSamples(writer.get(), 1, session * 10, 2);
  }
  EXPECT_THAT(ShardFiles(dir_),
              ElementsAre("rank-0001.1.h5", "rank-0001.2.h5", "rank-0001.h5", "rank-0001.journal"));
  EXPECT_EQ(TableRows(Shard("rank-0001.h5"), "/table"), 2);
  EXPECT_EQ(TableRows(Shard("rank-0001.2.h5"), "/table"), 2);
  EXPECT_THAT(Ids(Records()), ElementsAre("op0/case-0000", "op1/case-0001", "op1/case-0010",
                                          "op2/case-0011", "op2/case-0020", "op0/case-0021"));
}

TEST_F(ShardTest, OnlyJournaledCasesAreRead) {
  std::unique_ptr<ShardWriter> writer = Writer(0);
  ASSERT_NE(writer, nullptr);
  AppendSamples(writer.get(), 0, 0, 3);
  const std::string journal = Shard("rank-0000.journal");
  const std::string text = ReadText(journal);
  const nlohmann::json first_line = nlohmann::json::parse(text.substr(0, text.find('\n')));
  EXPECT_EQ(first_line["case_id"], "op0/case-0000");
  EXPECT_EQ(first_line["shard"], "rank-0000.h5");
  EXPECT_EQ(first_line["n"], 0);
  EXPECT_GT(first_line["address"].get<std::uint64_t>(), 0u);

  // The third line torn by a crash: its case is in the shard, not journaled.
  const std::size_t second_end = text.find('\n', text.find('\n') + 1);
  std::ofstream(journal, std::ios::trunc)
      << text.substr(0, second_end + 1) << R"({"case_id":"op2/ca)";
  EXPECT_THAT(JournaledCases(dir_).value(), ElementsAre("op0/case-0000", "op1/case-0001"));
  EXPECT_THAT(Ids(Records()), ElementsAre("op0/case-0000", "op1/case-0001"));

  // The next writer cuts the torn line off before appending its own.
  writer = Writer(0);
  ASSERT_NE(writer, nullptr);
  AppendSamples(writer.get(), 0, 2, 1);
  Result<std::vector<JournalEntry>> entries = ReadJournal(journal);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ(entries.value()[2].case_id, "op2/case-0002");
  EXPECT_EQ(entries.value()[2].shard, "rank-0000.1.h5");
  EXPECT_EQ(entries.value()[2].n, 0);
  EXPECT_THAT(Ids(Records()), ElementsAre("op0/case-0000", "op1/case-0001", "op2/case-0002"));
}

TEST_F(ShardTest, ACaseIsReadByItsAddressWhenItsNameIsLost) {
  std::unique_ptr<ShardWriter> writer = Writer(0);
  ASSERT_NE(writer, nullptr);
  AppendSamples(writer.get(), 0, 0, 3);
  {
    // As when a crash in the middle of a later flush tore /cases: the name is gone.
    Result<h5::Handle> file = h5::OpenFile(writer->path(), h5::FileMode::kReadWrite);
    ASSERT_TRUE(file.ok());
    ASSERT_GE(
        H5Lmove(file->id(), "/cases/000001", file->id(), "/elsewhere", H5P_DEFAULT, H5P_DEFAULT),
        0);
  }
  const std::vector<CaseRecord> records = Records();
  ASSERT_THAT(Ids(records), ElementsAre("op0/case-0000", "op1/case-0001", "op2/case-0002"));
  EXPECT_EQ(records[1].params, MakeSampleCase(1, 0).record.params);
}

TEST_F(ShardTest, ACaseRunAgainKeepsTheLatestRecord) {
  SampleCase first = MakeSampleCase(3, 1);  // failed
  SampleCase again = MakeSampleCase(3, 0);
  again.record.passed = true;
  std::unique_ptr<ShardWriter> rank1 = Writer(1);
  ASSERT_NE(rank1, nullptr);
  ASSERT_TRUE(rank1->Append(first.record).ok());
  std::unique_ptr<ShardWriter> rank0 = Writer(0);  // created later: a resumed run on rank 0
  ASSERT_NE(rank0, nullptr);
  AppendSamples(rank0.get(), 0, 0, 1);
  ASSERT_TRUE(rank0->Append(again.record).ok());

  const std::vector<CaseRecord> records = Records();
  ASSERT_THAT(Ids(records), ElementsAre("op0/case-0000", "op0/case-0003"));
  EXPECT_TRUE(records[1].passed);
  EXPECT_EQ(records[1].stored_at, "shards/rank-0000.h5:/cases/000001");
}

TEST_F(ShardTest, ResultsIndexLinksShardsAndTablesEveryCase) {
  for (int rank = 0; rank < 2; ++rank) {
    std::unique_ptr<ShardWriter> writer = Writer(rank);
    ASSERT_NE(writer, nullptr);
    AppendSamples(writer.get(), rank, rank * 100, 3);
  }
  std::unique_ptr<ShardWriter> resumed = Writer(1);
  ASSERT_NE(resumed, nullptr);
  AppendSamples(resumed.get(), 1, 200, 1);
  ASSERT_TRUE(WriteResultsIndex(dir_).ok());
  EXPECT_EQ(TableRows(dir_ + "/results.h5", "/cases"), 7);

  Result<h5::Handle> file = h5::OpenFile(dir_ + "/results.h5", h5::FileMode::kReadOnly);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(h5::ReadIntAttribute(file->id(), "cases").value(), std::optional<std::int64_t>(7));
  // Through the external links into each shard.
  for (const char* path : {"/shards/rank-0000/cases/000002", "/shards/rank-0001/cases/000000",
                           "/shards/rank-0001.1/cases/000000"}) {
    Result<h5::Handle> group = h5::OpenGroup(file->id(), path);
    ASSERT_TRUE(group.ok()) << path << ": " << group.status().ToString();
  }
  Result<h5::Handle> group = h5::OpenGroup(file->id(), "/shards/rank-0001.1/cases/000000");
  EXPECT_EQ(h5::ReadStringAttribute(group->id(), "case_id").value(),
            std::optional<std::string>("op2/case-0200"));
  group = Status::Internal("closed");
  file = Status::Internal("closed");

  // Written afresh each time, never half there.
  AppendSamples(resumed.get(), 1, 201, 1);
  ASSERT_TRUE(WriteResultsIndex(dir_).ok());
  EXPECT_EQ(TableRows(dir_ + "/results.h5", "/cases"), 8);
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(HasSubstr(".tmp")));
  }
}

// Records that are not cases are rows too (their `kind` says so) and are
// not counted as cases by results.h5's root attributes.
TEST_F(ShardTest, ResultsIndexCountsCasesOnly) {
  std::unique_ptr<ShardWriter> writer = Writer(0);
  ASSERT_NE(writer, nullptr);
  AppendSamples(writer.get(), 0, 0, 4);  // case 3 fails
  CaseRecord facts;
  facts.kind = RecordKind::kOperator;
  facts.case_id = "op0/@operator/0";
  facts.op_name = "op0";
  facts.case_index = -1;
  facts.passed = true;
  CaseRecord shape = facts;
  shape.kind = RecordKind::kBenchShape;
  shape.case_id = "op0/case-0000@bench";
  shape.passed = false;  // not measured: still no failed case
  shape.extra = {{"case_id", "op0/case-0000"}};
  ASSERT_TRUE(writer->Append(facts).ok());
  ASSERT_TRUE(writer->Append(shape).ok());
  ASSERT_TRUE(WriteResultsIndex(dir_).ok());

  Result<h5::Handle> file = h5::OpenFile(dir_ + "/results.h5", h5::FileMode::kReadOnly);
  ASSERT_TRUE(file.ok());
  const auto attribute = [&](const char* name) {
    return h5::ReadIntAttribute(file->id(), name).value().value_or(-1);
  };
  EXPECT_EQ(attribute("cases"), 4);
  EXPECT_EQ(attribute("passed"), 3);
  EXPECT_EQ(attribute("failed"), 1);
  EXPECT_EQ(attribute("records"), 6);
  EXPECT_EQ(attribute("format_version"), kFormatVersion);
  EXPECT_EQ(TableRows(dir_ + "/results.h5", "/cases"), 6);
}

// Shards of format_version 1 numbered a task's own cases from 0; read back,
// their ids are today's, numbered from 1, and a sweep's ids are untouched.
TEST_F(ShardTest, Format1IdsAreRenumberedFromOne) {
  std::unique_ptr<ShardWriter> writer = Writer(0);
  ASSERT_NE(writer, nullptr);
  SampleCase own = MakeSampleCase(0, 0);
  own.record.case_id = "relu/#0";
  own.record.op_name = "relu";
  own.record.params = nullptr;
  SampleCase swept = MakeSampleCase(1, 0);
  CaseRecord shape;
  shape.kind = RecordKind::kBenchShape;
  shape.case_id = "relu/#0@bench";
  shape.op_name = "relu";
  shape.case_index = -1;
  shape.extra = {{"case_id", "relu/#0"}};
  for (const CaseRecord* record : {&own.record, &swept.record, &shape}) {
    ASSERT_TRUE(writer->Append(*record).ok());
  }
  writer.reset();
  EXPECT_THAT(Ids(Records()), ElementsAre("relu/#0", "op1/case-0001", "relu/#0@bench"));
  {
    Result<h5::Handle> file = h5::OpenFile(Shard("rank-0000.h5"), h5::FileMode::kReadWrite);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ASSERT_GE(H5Adelete(file->id(), "format_version"), 0);
    ASSERT_TRUE(h5::WriteIntAttribute(file->id(), "format_version", 1).ok());
  }
  const std::vector<CaseRecord> records = Records();
  EXPECT_THAT(Ids(records), ElementsAre("relu/#1", "op1/case-0001", "relu/#1@bench"));
  EXPECT_EQ(records[2].extra.value("case_id", ""), "relu/#1");
}

TEST_F(ShardTest, AnEmptyRunFolderHasNoRecords) {
  EXPECT_TRUE(Records().empty());
  EXPECT_TRUE(JournaledCases(dir_).value().empty());
  ASSERT_TRUE(WriteResultsIndex(dir_).ok());
  EXPECT_EQ(TableRows(dir_ + "/results.h5", "/cases"), 0);
}

TEST_F(ShardTest, AMissingShardIsAnErrorOrAListedProblem) {
  std::unique_ptr<ShardWriter> writer = Writer(0);
  ASSERT_NE(writer, nullptr);
  AppendSamples(writer.get(), 0, 0, 2);
  std::unique_ptr<ShardWriter> other = Writer(1);
  ASSERT_NE(other, nullptr);
  AppendSamples(other.get(), 1, 5, 1);
  fs::remove(Shard("rank-0000.h5"));

  Result<std::vector<CaseRecord>> strict = ReadRunRecords(dir_);
  ASSERT_FALSE(strict.ok());
  EXPECT_THAT(strict.status().message(), HasSubstr("rank-0000.h5"));
  std::vector<std::string> problems;
  Result<std::vector<CaseRecord>> lenient = ReadRunRecords(dir_, &problems);
  ASSERT_TRUE(lenient.ok());
  EXPECT_THAT(Ids(lenient.value()), ElementsAre("op2/case-0005"));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0], HasSubstr("2 journaled cases, but no such shard"));

  problems.clear();
  ASSERT_TRUE(WriteResultsIndex(dir_, &problems).ok());
  EXPECT_EQ(problems.size(), 1u);
  Result<h5::Handle> file = h5::OpenFile(dir_ + "/results.h5", h5::FileMode::kReadOnly);
  ASSERT_TRUE(file.ok());
  EXPECT_THAT(h5::ReadStringAttribute(file->id(), "problems").value().value_or(""),
              HasSubstr("no such shard"));
}

TEST_F(ShardTest, AnUnwritableFolderIsAnErrorNamingIt) {
  std::ofstream(dir_ + "/file") << "not a folder";
  Result<std::unique_ptr<ShardWriter>> writer =
      ShardWriter::Create(dir_ + "/file/run", 0, StorePolicy::kAll);
  ASSERT_FALSE(writer.ok());
  EXPECT_THAT(writer.status().message(), HasSubstr(dir_ + "/file/run/shards"));
}

TEST_F(ShardTest, AfterAFailureInsideTheShardTheWriterStops) {
  std::unique_ptr<ShardWriter> writer = Writer(0);
  ASSERT_NE(writer, nullptr);
  AppendSamples(writer.get(), 0, 0, 1);
  // Not an HDF5 file any more: the write fails inside the shard.
  std::ofstream(writer->path(), std::ios::trunc) << std::string(4096, 'x');
  Status failed = writer->Append(MakeSampleCase(1, 0).record);
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.message(), HasSubstr(Shard("rank-0000.h5")));
  Status refused = writer->Append(MakeSampleCase(2, 0).record);
  EXPECT_THAT(refused.message(), HasSubstr("create a new ShardWriter"));
  writer = Writer(0);
  ASSERT_NE(writer, nullptr);
  AppendSamples(writer.get(), 0, 3, 1);
  std::vector<std::string> problems;
  EXPECT_THAT(Ids(ReadRunRecords(dir_, &problems).value()), ElementsAre("op0/case-0003"));
  EXPECT_EQ(problems.size(), 1u);  // case 0's shard is no longer HDF5
}

TEST_F(ShardTest, SpaceReservedForTheNextCaseIsGivenBack) {
  std::unique_ptr<ShardWriter> writer = Writer(0);
  ASSERT_NE(writer, nullptr);
  AppendSamples(writer.get(), 0, 0, 2);
  const std::string path = writer->path();
  struct stat info {};
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  EXPECT_GT(info.st_blocks * 512, info.st_size + (128 << 10));  // reserved for the next case
  writer.reset();
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  EXPECT_LT(info.st_blocks * 512, info.st_size + 8192);
  EXPECT_EQ(Records().size(), 2u);
}

TEST_F(ShardTest, AShardAnotherProcessHoldsLockedIsStillRead) {
  std::unique_ptr<ShardWriter> writer = Writer(0);
  ASSERT_NE(writer, nullptr);
  AppendSamples(writer.get(), 0, 0, 2);
  // An exclusive flock on its own open file description, as a live writer
  // in another process holds: HDF5's shared lock is refused.
  const int fd = open(Shard("rank-0000.h5").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
  EXPECT_THAT(Ids(Records()), ElementsAre("op0/case-0000", "op1/case-0001"));
  close(fd);
}

TEST(ShardFilesTest, ShardNamesAreRankAndSessionNumber) {
  EXPECT_EQ(ShardFileName(3, 0), "rank-0003.h5");
  EXPECT_EQ(ShardFileName(3, 2), "rank-0003.2.h5");
  EXPECT_EQ(ShardFileName(12345, 1), "rank-12345.1.h5");
  EXPECT_EQ(JournalFileName(3), "rank-0003.journal");
  EXPECT_EQ(CaseGroup(3), "/cases/000003");
  EXPECT_EQ(CaseGroup(1234567), "/cases/1234567");
  for (const auto& [rank, k] : {std::pair{0, 0}, {7, 1}, {12345, 10}}) {
    const std::optional<ShardName> parsed = ParseShardFileName(ShardFileName(rank, k));
    ASSERT_TRUE(parsed.has_value()) << ShardFileName(rank, k);
    EXPECT_EQ(parsed->Order(), std::make_tuple(rank, k));
    EXPECT_EQ(parsed->Link(), ShardFileName(rank, k).substr(0, ShardFileName(rank, k).size() - 3));
  }
  // Not shards: k written as 0, three digits, other files of shards/.
  for (const char* file : {"rank-0001.0.h5", "rank-001.h5", "rank-0001.journal", "rank-0001.x.h5",
                           "results.h5", "rank-0001.h5.tmp"}) {
    EXPECT_FALSE(ParseShardFileName(file).has_value()) << file;
  }
}

TEST(TensorStorageTest, SmallTensorsStayContiguousLargeOnesAreChunkedAndCompressed) {
  const auto storage = [](DType dtype, std::vector<std::int64_t> shape) {
    return TensorStorage(TensorView::Contiguous(dtype, std::move(shape), nullptr));
  };
  EXPECT_TRUE(storage(DType::kFloat32, {4, 8}).chunk.empty());
  EXPECT_TRUE(storage(DType::kFloat32, {16383}).chunk.empty());  // just under 64 KiB
  EXPECT_TRUE(storage(DType::kFloat32, {}).chunk.empty());       // a scalar
  // About 1 MiB a chunk, split along the leading dimension.
  const h5::DatasetOptions matrix = storage(DType::kFloat32, {1000, 1000});
  EXPECT_THAT(matrix.chunk, ElementsAre(262, 1000));
  EXPECT_TRUE(matrix.shuffle);
  EXPECT_EQ(matrix.deflate_level, 1);
  EXPECT_THAT(storage(DType::kFloat64, {1 << 20}).chunk, ElementsAre(1 << 17));
  EXPECT_THAT(storage(DType::kFloat32, {2, 1 << 20}).chunk, ElementsAre(1, 1 << 18));
  EXPECT_THAT(storage(DType::kFloat32, {3, 0, 1 << 16}).chunk,
              ::testing::IsEmpty());  // no elements
  const h5::DatasetOptions flags = storage(DType::kBool, {100000});
  EXPECT_THAT(flags.chunk, ElementsAre(100000));
  EXPECT_FALSE(flags.shuffle);  // nothing to shuffle in one-byte elements
}

TEST_F(ShardTest, ChunkedCompressedTensorsReadBack) {
  std::vector<float> values(std::size_t{300} * 500);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 977) * 0.25f;
  const TensorView view = TensorView::Contiguous(DType::kFloat32, {300, 500}, values.data());
  const std::string path = dir_ + "/chunked.h5";
  {
    Result<h5::Handle> file = h5::OpenFile(path, h5::FileMode::kTruncate);
    ASSERT_TRUE(file.ok());
    Result<h5::Handle> dataset =
        h5::CreateDataset(file->id(), "/x", H5T_NATIVE_FLOAT, {300, 500}, TensorStorage(view));
    ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
    ASSERT_TRUE(h5::WriteDataset(dataset->id(), H5T_NATIVE_FLOAT, values.data()).ok());
  }
  EXPECT_LT(fs::file_size(path), values.size() * sizeof(float) / 2);  // compressed
  Result<LoadedTensor> loaded = ReadH5Dataset(path, "/x", std::nullopt);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(std::memcmp(loaded->view.data, values.data(), values.size() * sizeof(float)), 0);
}

// --- Real failures, in a child process ----------------------------------

// The child writer, its stdout read line by line.
class ChildWriter {
 public:
  explicit ChildWriter(const std::vector<std::string>& args) {
    Result<Pipe> pipe = MakePipe();
    EXPECT_TRUE(pipe.ok());
    SpawnOptions options;
    options.argv = {OPVERIFY_SHARD_WRITER_CHILD};
    options.argv.insert(options.argv.end(), args.begin(), args.end());
    options.fds = {{pipe->write_fd, 1}};
    Result<Subprocess> child = Subprocess::Spawn(options);
    CloseFd(&pipe->write_fd);
    EXPECT_TRUE(child.ok()) << child.status().ToString();
    if (child.ok()) child_.emplace(std::move(child).value());
    out_fd_ = pipe->read_fd;
  }
  ~ChildWriter() { CloseFd(&out_fd_); }

  // The next line, without '\n'; "" at the end or after timeout_s.
  std::string NextLine(double timeout_s = 30) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (buffer_.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd ready{out_fd_, POLLIN, 0};
      if (poll(&ready, 1, 50) <= 0) continue;
      char block[4096];
      const ssize_t n = read(out_fd_, block, sizeof block);
      if (n <= 0) break;
      buffer_.append(block, static_cast<std::size_t>(n));
    }
    const std::size_t end = buffer_.find('\n');
    if (end == std::string::npos) return "";
    std::string line = buffer_.substr(0, end);
    buffer_.erase(0, end + 1);
    return line;
  }

  ExitStatus Kill() {
    kill(child_->pid(), SIGKILL);
    return child_->Wait().value();
  }
  ExitStatus Wait() { return child_->Wait(60).value_or(ExitStatus{}); }

 private:
  std::optional<Subprocess> child_;
  int out_fd_ = -1;
  std::string buffer_;
};

constexpr char kJournaled[] = "journaled ";

TEST_F(ShardTest, SigkillLeavesEveryJournaledCaseReadable) {
  // Kill points spread over whole cases, tensors large enough to be mid-write.
  const int kill_after[] = {1, 7, 23, 40};
  std::set<std::string> printed;
  for (std::size_t round = 0; round < std::size(kill_after); ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // Both promises survive SIGKILL: the flush is what counts, not the fsync.
    ChildWriter child({dir_, "0", "--first", std::to_string(1000 * round), "--elements", "20000",
                       "--durability", round % 2 == 0 ? "process" : "machine"});
    for (int i = 0; i < kill_after[round]; ++i) {
      const std::string line = child.NextLine();
      ASSERT_EQ(line.rfind(kJournaled, 0), 0u) << line;
      printed.insert(line.substr(std::strlen(kJournaled)));
    }
    const ExitStatus status = child.Kill();
    EXPECT_EQ(status.signal, SIGKILL) << status.Describe();
    // What it printed before the kill that this test had not read yet (a loaded machine lets the
    // writer run ahead of the reader).
    for (std::string line; !(line = child.NextLine(1)).empty();) {
      ASSERT_EQ(line.rfind(kJournaled, 0), 0u) << line;
      printed.insert(line.substr(std::strlen(kJournaled)));
    }

    // Every case it reported is journaled (one more may be: killed before printing).
    const std::set<std::string> journaled = JournaledCases(dir_).value();
    EXPECT_TRUE(std::includes(journaled.begin(), journaled.end(), printed.begin(), printed.end()));
    EXPECT_LE(journaled.size(), printed.size() + 1);
    // ... and readable, strictly: no problem at all.
    const std::vector<CaseRecord> records = Records();
    const std::vector<std::string> ids = Ids(records);
    EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()), journaled);
    for (const CaseRecord& record : records) {
      Result<LoadedTensor> tensor =
          ReadTensorFile(dir_ + "/" + record.stored_at + "/outputs/1/golden");
      ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
      EXPECT_EQ(tensor->view.NumElements(), 20000);
    }
    printed = journaled;
  }
  // Each run wrote a new shard; a writer after the last kill continues in another.
  std::unique_ptr<ShardWriter> writer = Writer(0);
  ASSERT_NE(writer, nullptr);
  EXPECT_EQ(writer->path(), Shard("rank-0000.4.h5"));
  AppendSamples(writer.get(), 0, 9000, 2);
  EXPECT_EQ(Records().size(), printed.size() + 2);
  ASSERT_TRUE(WriteResultsIndex(dir_).ok());
  EXPECT_EQ(TableRows(dir_ + "/results.h5", "/cases"),
            static_cast<std::int64_t>(printed.size() + 2));
}

// Writes failing as on a full disk (EFBIG past RLIMIT_FSIZE), without root.
TEST_F(ShardTest, AFileSizeLimitFailsAnAppendAndKeepsEarlierCases) {
  ChildWriter child({dir_, "100", "--elements", "4096", "--max-file-bytes", "1000000"});
  std::set<std::string> printed;
  std::string line;
  while ((line = child.NextLine()).rfind(kJournaled, 0) == 0) {
    printed.insert(line.substr(std::strlen(kJournaled)));
  }
  EXPECT_THAT(line, HasSubstr("error: "));
  EXPECT_THAT(line, HasSubstr(Shard("rank-0000.h5")));
  EXPECT_EQ(child.Wait().code, 3);
  EXPECT_GE(printed.size(), 2u);
  EXPECT_EQ(JournaledCases(dir_).value(), printed);
  const std::vector<std::string> ids = Ids(Records());
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()), printed);
}

// A real full disk: a 1 MiB tmpfs (needs CAP_SYS_ADMIN; skipped without it).
TEST_F(ShardTest, AFullDiskFailsAnAppendAndKeepsEarlierCases) {
  const std::string mount_point = dir_ + "/tmpfs";
  fs::create_directory(mount_point);
  if (mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=1m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs to fill (" << std::strerror(errno)
                 << "); AFileSizeLimitFailsAnAppendAndKeepsEarlierCases covers the same failure";
  }
  struct Unmount {
    std::string path;
    ~Unmount() { umount2(path.c_str(), MNT_DETACH); }
  } unmount{mount_point};

  Result<std::unique_ptr<ShardWriter>> writer =
      ShardWriter::Create(mount_point, 0, StorePolicy::kAll);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  std::set<std::string> appended;
  Status failure;
  int failed = -1;
  for (int i = 0; i < 100 && failure.ok(); ++i) {
    const SampleCase sample = MakeSampleCase(i, 0, 16384);  // 128 KiB of float32 a case
    failure = writer.value()->Append(sample.record);
    if (failure.ok()) appended.insert(sample.record.case_id);
    failed = i;
  }
  ASSERT_FALSE(failure.ok()) << "1 MiB never filled";
  EXPECT_THAT(failure.message(), HasSubstr(mount_point + "/shards/rank-0000"));
  EXPECT_GE(appended.size(), 2u);
  Result<std::vector<CaseRecord>> records = ReadRunRecords(mount_point);
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  const std::vector<std::string> ids = Ids(records.value());
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()), appended);
  // Still full: the same case again fails too (a failed case has the larger
  // record: a smaller one may fit what is left), and still nothing is lost.
  EXPECT_FALSE(writer.value()->Append(MakeSampleCase(failed, 0, 16384).record).ok());
  EXPECT_EQ(ReadRunRecords(mount_point).value().size(), appended.size());
}

}  // namespace
}  // namespace opverify
