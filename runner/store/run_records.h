// The reading half of the HDF5 result store (schemas/hdf5-layout.md): the
// records a run folder's shards hold, as their journals name them. Readers
// take only journaled records, so a writer killed at any moment
// (shard_writer.h) leaves nothing half-written for them.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "runner/common/status.h"
#include "runner/store/case_record.h"
#include "runner/store/shard_files.h"

namespace opverify {

// Ids of every record journaled by any rank in this run folder (torn last
// lines ignored); empty when the folder has no journals yet. What a resume
// may skip is rather the ids ReadRunRecords returns: journaled and readable
// (they differ only when a shard no longer opens at all).
Result<std::set<std::string>> JournaledCases(const std::string& run_dir);

// Every journaled record of the run folder (tensors not loaded), in
// (rank, shard k, n) order. A case id journaled more than once (re-run
// after a resume) keeps the record of the most recently created shard.
// Shards are opened read-only, retrying without file locking when HDF5
// refuses the lock (a writer still alive, NFS). Each record is opened at the
// address its journal line gives, so a record stays readable when a later
// append, killed in the middle of H5Fflush, tore the shard's /cases index.
// Each shard is first read in a forked child: one that crashes or stalls
// libhdf5 (a damaged file), is not a regular file or is a symbolic link is a
// problem naming it and is never opened by this process; a record whose
// fields have the wrong JSON types (record_fields.h) is a problem naming it.
// A journaled record that cannot be read (a missing or unopenable shard, an
// `extra` naming no RecordKind): with `problems` null, an error; otherwise a
// line in *problems and the record is left out. A folder without shards/
// has no records.
Result<std::vector<CaseRecord>> ReadRunRecords(const std::string& run_dir,
                                               std::vector<std::string>* problems = nullptr);

// A journaled record as ReadRunRecords reads it, with where it is stored.
struct StoredRecord {
  CaseRecord record;
  ShardName shard;
  std::int64_t n = 0;    // its group: /cases/<n> in that shard
  std::string created;   // its shard's creation time: the later one wins a duplicate
  bool tensors = false;  // whether outputs/<i>/{golden,actual} were stored
};

// The shards of a run folder and the records ReadRunRecords returns, with
// where each is stored (what results.h5 indexes).
struct RunContents {
  std::vector<ShardName> shards;  // every shard file, in (rank, k) order
  std::vector<StoredRecord> records;
};
Result<RunContents> ReadRunContents(const std::string& run_dir,
                                    std::vector<std::string>* problems = nullptr);

}  // namespace opverify
