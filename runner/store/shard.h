// The HDF5 result store (schemas/hdf5-layout.md): one shard per rank
// (shards/rank-NNNN.h5), written only by that rank, and results.h5 linking
// them with one table of every case.
//
// Durability: each case is written completely and flushed (H5Fflush), then
// a line naming it and where it is stored is appended to a journal beside
// the shard (rank-NNNN.journal, JSON lines). A rank killed at any moment
// leaves every journaled case readable: between appends the shard is
// closed, and readers take only journaled cases. With
// Durability::kMachineCrash the shard and then the journal line are also
// fsync'd, so a journaled case survives a crash of the machine. On resume a
// rank trusts the journal and writes a new shard file (rank-NNNN.<k>.h5)
// rather than appending to one a crash may have torn.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/status.h"
#include "runner/judge/tensor_view.h"

namespace opverify {

enum class StorePolicy { kAll, kFailures, kNone };  // which cases keep golden/actual tensors

// What a journaled case survives. kMachineCrash costs two fsyncs a case
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

// Everything the store keeps about one case.
struct CaseRecord {
  std::string case_id;
  std::string op_name;
  int case_index = 0;
  nlohmann::json params = nlohmann::json::object();
  nlohmann::json input_desc = nlohmann::json::array();
  bool passed = false;
  std::string route;       // of the first failing output, else of output 0
  std::string error_type;  // empty when passed
  std::string error_msg;
  // Per output: the judge's JSON (route, metrics, worst).
  nlohmann::json outputs = nlohmann::json::array();
  // Milliseconds; wall_ms, compile_ms, construct_ms, golden_ms, impl_ms and
  // judge_ms are also columns of the case table.
  nlohmann::json timings = nlohmann::json::object();
  int rank = 0;
  std::string device;
  // The A/B record of an accuracy failure; its "classification" is also a
  // column of the case table.
  nlohmann::json ab = nlohmann::json(nullptr);
  // Anything else (warnings, probe, golden device).
  nlohmann::json extra = nlohmann::json::object();
  // Per output: golden and actual, kept by the policy (views valid during Append).
  std::vector<std::pair<TensorView, TensorView>> tensors;
  // Set by ReadRunRecords (ignored by Append): where the case is, as a
  // tensor spec prefix relative to the run folder, e.g.
  // "shards/rank-0000.1.h5:/cases/000003" (+ "/outputs/0/golden").
  std::string stored_at;
};

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
  // Writes the case group and table row, flushes (and fsyncs) the shard,
  // then journals the case. The disk space it may need is allocated first:
  // a full disk fails there, with the shard untouched. Any failure is a
  // Status naming the file; the cases before it stay readable, the failed
  // case is not journaled. After a failure inside the shard (HDF5 may have
  // left it half updated) every later Append fails: create a new writer.
  // Not thread-safe: one writer per rank, used by one thread.
  Status Append(const CaseRecord& record);
  const std::string& path() const;

 private:
  struct Impl;
  explicit ShardWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Ids of every case journaled by any rank in this run folder (torn last
// lines ignored); empty when the folder has no journals yet. What a resume
// may skip is rather the ids ReadRunRecords returns: journaled and readable
// (they differ only when a shard no longer opens at all).
Result<std::set<std::string>> JournaledCases(const std::string& run_dir);

// Every journaled case record of the run folder (tensors not loaded), in
// (rank, shard k, n) order. A case id journaled more than once (re-run
// after a resume) keeps the record of the most recently created shard.
// Shards are opened read-only, retrying without file locking when HDF5
// refuses the lock (a writer still alive, NFS). Each case is opened at the
// address its journal line gives, so a case stays readable when a later
// append, killed in the middle of H5Fflush, tore the shard's /cases index.
// A journaled case that cannot be read (a missing or unopenable shard):
// with `problems` null, an error; otherwise a line in *problems and the
// case is left out. A folder without shards/ has no records.
Result<std::vector<CaseRecord>> ReadRunRecords(const std::string& run_dir,
                                               std::vector<std::string>* problems = nullptr);

// Writes <run_dir>/results.h5 afresh (to a temporary name, then renamed, so
// a reader never sees half a file): external links /shards/rank-NNNN[.k] to
// every shard's root and one table (1-D compound dataset /cases) of every
// case ReadRunRecords returns. `problems` as for ReadRunRecords; they are
// also kept in the file's `problems` attribute. Call it when the run's
// writers are done.
Status WriteResultsIndex(const std::string& run_dir, std::vector<std::string>* problems = nullptr);

// Makes <run_dir>/shards the union of the shards of `parts`: run folders of
// one job run apart, such as the `--shard I/N` parts of a Slurm job array.
// Each part's rank-NNNN[.k].h5 becomes rank-NNNN.<next free k>.h5 here, as
// if it were a later session of that rank, and its journal lines follow it
// under the new name. Files are hard-linked where the file system allows
// (a shard is never written again once its writer closed it), else copied;
// a part's shard keeps its root attributes (`shard` is its k there). A
// case stored in several parts keeps its most recent record, as after a
// resume. shards/merged_from.json lists where each file came from; merging
// again replaces what an earlier merge made, while a run_dir whose shards/
// a batch wrote is refused. A journal line naming a shard its part lacks:
// with `problems` null, an error; otherwise a line in *problems and left out.
// Call it when the parts' writers are done.
Status MergeShards(const std::string& run_dir, const std::vector<std::string>& parts,
                   std::vector<std::string>* problems = nullptr);

}  // namespace opverify
