// A fresh run folder per test, with the store's writer and reader at hand
// (shard_test, case_record_test, shard_merge_test).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "runner/store/case_record.h"
#include "runner/store/run_records.h"
#include "runner/store/shard_writer.h"
#include "tests/support/scratch_dir_test.h"
#include "tests/unit/shard_sample_case.h"

namespace opverify::testing {

class ShardTest : public ScratchDirTest {
 protected:
  // A writer of `rank` into `run_dir` (default: the test's run folder).
  std::unique_ptr<ShardWriter> Writer(int rank, StorePolicy policy = StorePolicy::kAll,
                                      const std::string& run_dir = "") {
    Result<std::unique_ptr<ShardWriter>> writer =
        ShardWriter::Create(run_dir.empty() ? dir_ : run_dir, rank, policy);
    EXPECT_TRUE(writer.ok()) << writer.status().ToString();
    return writer.ok() ? std::move(writer).value() : nullptr;
  }

  // Appends sample cases first .. first+count-1 of `rank`.
  void AppendSamples(ShardWriter* writer, int rank, int first, int count) {
    for (int i = first; i < first + count; ++i) {
      const SampleCase sample = MakeSampleCase(i, rank);
      Status appended = writer->Append(sample.record);
      ASSERT_TRUE(appended.ok()) << appended.ToString();
    }
  }

  // ReadRunRecords of `run_dir` (default: the test's run folder), which must succeed.
  std::vector<CaseRecord> Records(const std::string& run_dir = "") {
    Result<std::vector<CaseRecord>> records = ReadRunRecords(run_dir.empty() ? dir_ : run_dir);
    EXPECT_TRUE(records.ok()) << records.status().ToString();
    return records.ok() ? std::move(records).value() : std::vector<CaseRecord>{};
  }

  std::string Shard(const std::string& file) const { return dir_ + "/shards/" + file; }
};

inline std::vector<std::string> Ids(const std::vector<CaseRecord>& records) {
  std::vector<std::string> ids;
  ids.reserve(records.size());
  for (const CaseRecord& record : records) ids.push_back(record.case_id);
  return ids;
}

}  // namespace opverify::testing
