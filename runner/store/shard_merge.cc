#include "runner/store/shard_merge.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "runner/common/strings.h"
#include "runner/store/durable_file.h"
#include "runner/store/journal.h"
#include "runner/store/shard_files.h"

namespace opverify {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kMergeRecord[] = "merged_from.json";

// A hard link to `from` at `to`, or a copy where a link cannot be made.
Status LinkOrCopy(const fs::path& from, const fs::path& to) {
  std::error_code error;
  fs::create_hard_link(from, to, error);
  if (!error) return Status::Ok();
  fs::copy_file(from, to, error);
  if (error) {
    return Status::IoError(to.string() + ": cannot link or copy " + from.string() + ": " +
                           error.message());
  }
  return Status::Ok();
}

// Adds one part's shards and journal lines to the shards folder being built.
// `next_k`: per rank, the next free k there.
Status AddPart(const std::string& part, const fs::path& building, std::map<int, int>* next_k,
               json* record, std::vector<std::string>* problems) {
  const fs::path from = fs::path(part) / kShardsFolder;
  std::error_code error;
  if (!fs::is_directory(from, error)) {
    return Status::NotFound(part + ": not a run folder (no shards/)");
  }
  Result<std::vector<ShardName>> names = ListShards(from);
  if (!names.ok()) return names.status();
  Result<std::vector<JournalEntry>> entries = ReadJournals(from);
  if (!entries.ok()) return entries.status();
  std::map<std::string, ShardName> renamed;
  for (const ShardName& name : names.value()) {
    ShardName to{name.rank, (*next_k)[name.rank]++, ""};
    to.file = ShardFileName(to.rank, to.k);
    Status placed = LinkOrCopy(from / name.file, building / to.file);
    if (!placed.ok()) return placed;
    renamed[name.file] = to;
    record->push_back({{"part", fs::absolute(part).lexically_normal().string()},
                       {"shard", name.file},
                       {"as", to.file}});
  }
  std::map<int, Journal> journals;
  for (JournalEntry entry : entries.value()) {
    const auto to = renamed.find(entry.shard);
    if (to == renamed.end()) {
      Status reported =
          ReportProblem(Status::NotFound((from / entry.shard).string() + ": journaled case " +
                                  entry.case_id + ", but no such shard"),
                 problems);
      if (!reported.ok()) return reported;
      continue;
    }
    auto journal = journals.find(to->second.rank);
    if (journal == journals.end()) {
      Result<Journal> opened =
          Journal::Open((building / JournalFileName(to->second.rank)).string());
      if (!opened.ok()) return opened.status();
      journal = journals.emplace(to->second.rank, std::move(opened).value()).first;
    }
    entry.shard = to->second.file;
    Status appended = journal->second.Append(entry, /*sync=*/false);
    if (!appended.ok()) return appended;
  }
  return Status::Ok();
}

}  // namespace

Status MergeShards(const std::string& run_dir, const std::vector<std::string>& parts,
                   std::vector<std::string>* problems) {
  const fs::path shards = fs::path(run_dir) / kShardsFolder;
  std::error_code error;
  if (fs::exists(shards, error) && !fs::exists(shards / kMergeRecord, error)) {
    return Status::InvalidInput(
        shards.string() + ": holds the shards of a run, not of a merge; merge into another folder");
  }
  // Built beside, then swapped in: a reader sees the old merge or the new one.
  const fs::path building =
      fs::path(run_dir) / Printf("shards.merging.%d", static_cast<int>(getpid()));
  fs::remove_all(building, error);
  fs::create_directories(building, error);
  if (error) return Status::IoError(building.string() + ": " + error.message());
  std::map<int, int> next_k;
  json record = json::array();
  for (const std::string& part : parts) {
    Status added = AddPart(part, building, &next_k, &record, problems);
    if (!added.ok()) {
      fs::remove_all(building, error);
      return added;
    }
  }
  const std::string text = record.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  Status status = WriteNewFile((building / kMergeRecord).string(), text.data(), text.size(),
                               /*exclusive=*/true);
  if (!status.ok()) return status;
  const fs::path replaced =
      fs::path(run_dir) / Printf("shards.replaced.%d", static_cast<int>(getpid()));
  if (fs::exists(shards, error)) fs::rename(shards, replaced, error);
  if (!error) fs::rename(building, shards, error);
  if (error) {
    return Status::IoError(shards.string() +
                           ": cannot put the merged shards in place: " + error.message());
  }
  fs::remove_all(replaced, error);
  return SyncDirectory(run_dir);
}

}  // namespace opverify
