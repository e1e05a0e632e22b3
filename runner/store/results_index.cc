#include "runner/store/results_index.h"

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <system_error>
#include <utility>

#include "runner/common/strings.h"
#include "runner/h5/h5.h"
#include "runner/store/case_table.h"
#include "runner/store/durable_file.h"
#include "runner/store/run_records.h"

namespace opverify {
namespace {

namespace fs = std::filesystem;

constexpr char kResultsFile[] = "results.h5";
constexpr char kResultsTable[] = "/cases";
constexpr hsize_t kResultsTableChunkRows = 1024;

// results.h5, built in memory.
Result<std::vector<std::byte>> ResultsFileImage(const std::string& path,
                                                const RunContents& contents,
                                                const std::vector<std::string>& problems) {
  Result<h5::Handle> file = h5::CreateInMemoryFile(path);
  if (!file.ok()) return file.status();
  const hid_t root = file->id();
  // The counts are of cases: operator facts and benchmark rows are records too
  // (`records` counts every row of /cases, `kind` says which each is).
  std::int64_t cases = 0;
  std::int64_t passed = 0;  // without a waiver
  std::int64_t waived = 0;
  for (const StoredRecord& stored : contents.records) {
    if (stored.record.kind != RecordKind::kCase) continue;
    ++cases;
    waived += stored.record.waived ? 1 : 0;
    passed += stored.record.passed && !stored.record.waived ? 1 : 0;
  }
  Status status = WriteStrings(
      root,
      {{"format", "opverify-results"}, {"created", NowUtc()}, {"problems", JsonText(problems)}});
  if (!status.ok()) return status;
  for (const auto& [attribute, value] :
       {std::pair<const char*, std::int64_t>{"format_version", kFormatVersion},
        {"records", static_cast<std::int64_t>(contents.records.size())},
        {"cases", cases},
        {"passed", passed},
        {"waived", waived},
        {"failed", cases - passed - waived}}) {
    status = h5::WriteIntAttribute(root, attribute, value);
    if (!status.ok()) return status;
  }
  Result<h5::Handle> links = h5::CreateGroup(root, "/shards");
  if (!links.ok()) return links.status();
  for (const ShardName& shard : contents.shards) {
    status = h5::CreateExternalLink(links->id(), shard.Link(),
                                    std::string(kShardsFolder) + "/" + shard.file, "/");
    if (!status.ok()) return status;
  }
  std::vector<CaseRow> rows;
  rows.reserve(contents.records.size());
  for (const StoredRecord& stored : contents.records) {
    rows.push_back(MakeCaseRow(stored.record, stored.shard.k, stored.n,
                               "/shards/" + stored.shard.Link() + CaseGroup(stored.n),
                               stored.tensors));
  }
  Result<h5::Handle> table = CreateCaseTable(root, kResultsTable, rows, kResultsTableChunkRows);
  if (!table.ok()) return table.status();
  return h5::FileImage(root);
}

}  // namespace

Status WriteResultsIndex(const std::string& run_dir, std::vector<std::string>* problems) {
  std::vector<std::string> found;
  Result<RunContents> contents = ReadRunContents(run_dir, problems != nullptr ? &found : nullptr);
  if (!contents.ok()) return contents.status();
  if (problems != nullptr) problems->insert(problems->end(), found.begin(), found.end());

  // Built in memory and written out whole under a temporary name, then
  // renamed: readers see the old index or the new one, never half of one.
  const fs::path final_path = fs::path(run_dir) / kResultsFile;
  Result<std::vector<std::byte>> image =
      ResultsFileImage(final_path.string(), contents.value(), found);
  if (!image.ok()) return image.status();
  const std::string temporary = final_path.string() + Printf(".tmp.%d", static_cast<int>(getpid()));
  Status status = WriteNewFile(temporary, image->data(), image->size(), /*exclusive=*/false);
  if (!status.ok()) return status;
  std::error_code error;
  fs::rename(temporary, final_path, error);
  if (error) {
    fs::remove(temporary, error);
    return Status::IoError(final_path.string() + ": renaming " + temporary +
                           " to it failed: " + error.message());
  }
  return SyncDirectory(run_dir);
}

}  // namespace opverify
