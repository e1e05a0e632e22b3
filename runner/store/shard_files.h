// The files of a run folder's shards/ (schemas/hdf5-layout.md) and what
// every part of the store writes and reads the same way: shard and journal
// names, listing them, a case group's attributes. Internal to runner/store/:
// callers use shard_writer.h, run_records.h, results_index.h, shard_merge.h.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/json_text.h"
#include "runner/common/status.h"
#include "runner/h5/h5.h"
#include "runner/store/case_record.h"
#include "runner/store/journal.h"

namespace opverify {

inline constexpr char kShardsFolder[] = "shards";
inline constexpr char kCasesGroup[] = "/cases";  // in a shard: /cases/<n> per record
// 2: a task's own cases are "<op>/#N" numbered from 1 (1 numbered them from
// 0; ReadRunContents renumbers such shards' ids) and the tables have `kind`.
// 3: a case's verdict may be "waived" (a pass under declared exceptions).
inline constexpr std::int64_t kFormatVersion = 3;

// Where a shard is: rank-NNNN.h5 (k = 0) or rank-NNNN.<k>.h5.
struct ShardName {
  int rank = 0;
  int k = 0;
  std::string file;  // the file name in shards/
  // Its link name in results.h5: the file name without ".h5".
  std::string Link() const { return file.substr(0, file.size() - 3); }
  auto Order() const { return std::make_tuple(rank, k); }
};

std::string ShardFileName(int rank, int k);
std::string JournalFileName(int rank);  // rank-NNNN.journal
// "/cases/000003": zero-padded so names sort as numbers do.
std::string CaseGroup(std::int64_t n);
// The shard `file` names (rank-NNNN[.k].h5, NNNN at least four digits, k >
// 0); nullopt for any other name.
std::optional<ShardName> ParseShardFileName(const std::string& file);

// Every shard file in `shards`, in (rank, k) order.
Result<std::vector<ShardName>> ListShards(const std::filesystem::path& shards);
// Every complete entry of every journal in `shards`, journal by journal in
// name order (none when the folder is missing). A journal that cannot be
// read: with `problems` null, the error; otherwise a line in *problems
// naming it, and the other journals are read.
Result<std::vector<JournalEntry>> ReadJournals(const std::filesystem::path& shards,
                                               std::vector<std::string>* problems = nullptr);

// "2024-05-01T12:34:56.123456Z": UTC, so it sorts as time does.
std::string NowUtc();
// Writes string attributes (name, value) on `object`, stopping at the first failure.
Status WriteStrings(hid_t object, const std::vector<std::pair<const char*, std::string>>& values);

// A record's `extra` attribute as stored: record.extra, plus "kind" (its
// RecordKindName) for a record that is not a case. InvalidInput when
// record.extra already holds "kind".
Result<nlohmann::json> StoredExtra(const CaseRecord& record);
// The kind a stored `extra` attribute names, taking "kind" out of it: kCase
// without the key. InvalidInput (naming `where`) for a value that is no kind.
Result<RecordKind> TakeRecordKind(nlohmann::json* extra, const std::string& where);

// The error a caller gets when it did not ask for `problems`; else the
// problem is listed and Ok comes back, so the caller carries on.
Status ReportProblem(const Status& problem, std::vector<std::string>* problems);

}  // namespace opverify
