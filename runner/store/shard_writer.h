// The writing half of the HDF5 result store (schemas/hdf5-layout.md): one
// shard per rank (shards/rank-NNNN.h5), written only by that rank.
//
// Durability: each record is written completely and flushed (H5Fflush),
// then a line naming it and where it is stored is appended to a journal
// beside the shard (rank-NNNN.journal, JSON lines). A rank killed at any
// moment leaves every journaled record readable: between appends the shard
// is closed, and readers (run_records.h) take only journaled records. With
// Durability::kMachineCrash the shard and then the journal line are also
// fsync'd, so a journaled record survives a crash of the machine. On resume
// a rank trusts the journal and writes a new shard file (rank-NNNN.<k>.h5)
// rather than appending to one a crash may have torn.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "runner/common/status.h"
#include "runner/store/case_record.h"

namespace opverify {

enum class StorePolicy { kAll, kFailures, kNone };  // which cases keep golden/actual tensors

// What a journaled record survives. kMachineCrash costs two fsyncs a record
// (about 8 ms on a virtual disk, against under 1 ms for the rest of Append).
enum class Durability {
  kProcessCrash,  // the writer killed (SIGKILL, OOM): flush and journal, no fsync
  kMachineCrash,  // also power loss or a kernel crash: fsync the shard, then the journal
};

// "all", "failures", "none" (the --store values).
std::string_view StorePolicyName(StorePolicy policy);
std::optional<StorePolicy> ParseStorePolicy(std::string_view name);
// Whether `policy` keeps the golden/actual tensors of a case.
bool KeepsTensors(StorePolicy policy, bool passed);

class ShardWriter {
 public:
  // Creates <run_dir>/shards/rank-NNNN[.k].h5 (k: the first free number;
  // an existing shard is never appended to) and opens rank-NNNN.journal for
  // appending, cutting off a torn last line. Errors (unwritable folder) name
  // the path.
  static Result<std::unique_ptr<ShardWriter>> Create(
      const std::string& run_dir, int rank, StorePolicy policy,
      Durability durability = Durability::kMachineCrash);
  ~ShardWriter();
  // Writes the record's group and table row, flushes (and fsyncs) the
  // shard, then journals the record. A record without case_id, or whose
  // extra holds "kind", is InvalidInput and nothing is written. The disk
  // space it may need is allocated first: a full disk fails there, with the
  // shard untouched. Any failure is a Status naming the file; the records
  // before it stay readable, the failed one is not journaled. After a
  // failure inside the shard (HDF5 may have left it half updated) every
  // later Append fails: create a new writer.
  // Not thread-safe: one writer per rank, used by one thread.
  Status Append(const CaseRecord& record);
  const std::string& path() const;

 private:
  struct Impl;
  explicit ShardWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace opverify
