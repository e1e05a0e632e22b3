#include "runner/store/shard.h"

#include "runner/store/tensor_storage.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <system_error>
#include <tuple>

#include "runner/common/strings.h"
#include "runner/store/case_table.h"
#include "runner/store/durable_file.h"
#include "runner/store/h5.h"
#include "runner/store/journal.h"
#include "runner/tensor_io/h5_tensor.h"

namespace opverify {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kShardsFolder[] = "shards";
constexpr char kResultsFile[] = "results.h5";
constexpr std::int64_t kFormatVersion = 1;
constexpr char kCasesGroup[] = "/cases";
constexpr char kShardTable[] = "/table";
constexpr char kResultsTable[] = "/cases";
// A row is about 200 bytes in the file: a chunk of 64 rows is a 13 KiB write.
constexpr hsize_t kShardTableChunkRows = 64;
constexpr hsize_t kResultsTableChunkRows = 1024;

// Where a shard is: rank-NNNN.h5 (k = 0) or rank-NNNN.<k>.h5.
struct ShardName {
  int rank = 0;
  int k = 0;
  std::string file;  // the file name in shards/
  // Its link name in results.h5: the file name without ".h5".
  std::string Link() const { return file.substr(0, file.size() - 3); }
  auto Order() const { return std::make_tuple(rank, k); }
};

std::string ShardFileName(int rank, int k) {
  return k == 0 ? Printf("rank-%04d.h5", rank) : Printf("rank-%04d.%d.h5", rank, k);
}

std::string JournalFileName(int rank) { return Printf("rank-%04d.journal", rank); }

// "/cases/000003": zero-padded so names sort as numbers do.
std::string CaseGroup(std::int64_t n) {
  return std::string(kCasesGroup) + Printf("/%06lld", static_cast<long long>(n));
}

// The rank of "rank-NNNN<suffix>", where NNNN has at least four digits.
std::optional<int> ParseRank(std::string_view name, std::string_view suffix,
                             std::string_view* rest) {
  constexpr std::string_view kPrefix = "rank-";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  const std::size_t digits = std::min(name.find_first_not_of("0123456789"), name.size());
  if (digits < 4 || name.size() < digits + suffix.size() ||
      name.substr(name.size() - suffix.size()) != suffix) {
    return std::nullopt;
  }
  *rest = name.substr(digits, name.size() - digits - suffix.size());
  return ParseDecimal(name.substr(0, digits));
}

std::optional<ShardName> ParseShardFileName(const std::string& file) {
  std::string_view rest;
  const std::optional<int> rank = ParseRank(file, ".h5", &rest);
  if (!rank) return std::nullopt;
  int k = 0;
  if (!rest.empty()) {
    if (rest.front() != '.') return std::nullopt;
    const std::optional<int> number = ParseDecimal(rest.substr(1));
    if (!number || *number == 0) return std::nullopt;
    k = *number;
  }
  return ShardName{*rank, k, file};
}

bool IsJournalFileName(const std::string& file) {
  std::string_view rest;
  return ParseRank(file, ".journal", &rest) && rest.empty();
}

// "2024-05-01T12:34:56.123456Z": UTC, so it sorts as time does.
std::string NowUtc() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
      1000000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  return Printf("%s.%06lldZ", text, static_cast<long long>(micros));
}

// `text` with invalid UTF-8 replaced by U+FFFD: attributes are UTF-8 strings,
// and an operator's error message may hold any bytes.
std::string ValidUtf8(const std::string& text) {
  return json::parse(json(text).dump(-1, ' ', false, json::error_handler_t::replace))
      .get<std::string>();
}

std::string JsonText(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

Status WriteStrings(hid_t object, const std::vector<std::pair<const char*, std::string>>& values) {
  for (const auto& [name, value] : values) {
    Status written = h5::WriteStringAttribute(object, name, value);
    if (!written.ok()) return written;
  }
  return Status::Ok();
}

// The error a caller gets when it did not ask for `problems`; else the
// problem is listed and Ok comes back, so the caller carries on.
Status Report(const Status& problem, std::vector<std::string>* problems) {
  if (problems == nullptr) return problem;
  problems->push_back(problem.ToString());
  return Status::Ok();
}

// Opens a shard read-only. HDF5 takes a shared flock(); when that is refused
// (a writer still holds the file, or flock does not work on this file
// system) it retries without locking, as HDF5_USE_FILE_LOCKING=FALSE does.
// Our shards use HDF5's earliest file format, which keeps no "open for
// write" flag, so a file whose writer was killed opens as it is; a file in
// the latest format (superblock 3) would need `h5clear -s` first.
Result<h5::Handle> OpenShardForReading(const std::string& path) {
  Result<h5::Handle> file = h5::OpenFile(path, h5::FileMode::kReadOnly);
  if (file.ok() || file.status().code() == Status::Code::kNotFound ||
      file.status().code() == Status::Code::kInvalidInput) {
    return file;
  }
  h5::FileOptions unlocked;
  unlocked.file_locking = false;
  Result<h5::Handle> retry = h5::OpenFile(path, h5::FileMode::kReadOnly, unlocked);
  if (retry.ok()) return retry;
  std::string hint;
  if (retry.status().message().find("truncated file") != std::string::npos) {
    hint = " (shorter than its superblock says: `truncate -s <stored_eof>` restores it)";
  } else if (retry.status().message().find("already open for write") != std::string::npos) {
    hint = " (`h5clear -s` clears that flag)";
  }
  return Status::IoError(file.status().message() +
                         "; without file locking: " + retry.status().message() + hint);
}

// The attributes every case group has. `where` names the group in
// messages: a group opened by address has no path HDF5 could name cheaply.
Result<std::string> RequiredString(hid_t object, const char* name, const std::string& where) {
  Result<std::optional<std::string>> value = h5::ReadStringAttribute(object, name);
  if (!value.ok()) return value.status();
  if (!value.value()) return Status::InvalidInput(where + ": no attribute '" + name + "'");
  return *std::move(value).value();
}

Result<json> RequiredJson(hid_t object, const char* name, const std::string& where) {
  Result<std::string> text = RequiredString(object, name, where);
  if (!text.ok()) return text.status();
  json value = json::parse(text.value(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return Status::InvalidInput(where + ": attribute '" + name + "' is not JSON");
  }
  return value;
}

Result<std::int64_t> RequiredInt(hid_t object, const char* name, const std::string& where) {
  Result<std::optional<std::int64_t>> value = h5::ReadIntAttribute(object, name);
  if (!value.ok()) return value.status();
  if (!value.value()) return Status::InvalidInput(where + ": no attribute '" + name + "'");
  return *value.value();
}

// A journaled case as stored, with where it is.
struct StoredCase {
  CaseRecord record;
  ShardName shard;
  std::int64_t n = 0;
  std::string created;  // its shard's creation time: the later one wins a duplicate
  bool tensors = false;
};

// Opens a journaled case's group: by the address the journal gives first,
// which needs nothing but the case's own object header (no later append
// touches it), so a case stays readable when an append interrupted in the
// middle of H5Fflush tore /cases; by name when the address is unknown or
// holds another case.
Result<h5::Handle> OpenCaseGroup(hid_t file, const JournalEntry& entry) {
  if (entry.address != 0) {
    Result<h5::Handle> group = h5::OpenObjectAt(file, entry.address);
    if (group.ok()) {
      Result<std::optional<std::string>> id = h5::ReadStringAttribute(group->id(), "case_id");
      if (id.ok() && id.value() == entry.case_id) return group;
    }
  }
  return h5::OpenGroup(file, CaseGroup(entry.n));
}

// Reads a journaled case of an open shard.
Result<StoredCase> ReadCase(hid_t file, const ShardName& shard, const JournalEntry& entry) {
  const std::int64_t n = entry.n;
  Result<h5::Handle> group = OpenCaseGroup(file, entry);
  if (!group.ok()) return group.status();
  const hid_t id = group->id();
  StoredCase stored;
  stored.shard = shard;
  stored.n = n;
  CaseRecord& record = stored.record;
  record.stored_at = std::string(kShardsFolder) + "/" + shard.file + ":" + CaseGroup(n);

  const std::string& where = record.stored_at;
  Result<std::string> verdict = RequiredString(id, "verdict", where);
  if (!verdict.ok()) return verdict.status();
  record.passed = verdict.value() == "passed";
  const std::pair<const char*, std::string*> strings[] = {
      {"case_id", &record.case_id},     {"op_name", &record.op_name},
      {"route", &record.route},         {"error_type", &record.error_type},
      {"error_msg", &record.error_msg}, {"device", &record.device}};
  for (const auto& [name, out] : strings) {
    Result<std::string> value = RequiredString(id, name, where);
    if (!value.ok()) return value.status();
    *out = std::move(value).value();
  }
  const std::pair<const char*, json*> jsons[] = {
      {"params", &record.params},   {"input_desc", &record.input_desc},
      {"outputs", &record.outputs}, {"timings", &record.timings},
      {"ab", &record.ab},           {"extra", &record.extra}};
  for (const auto& [name, out] : jsons) {
    Result<json> value = RequiredJson(id, name, where);
    if (!value.ok()) return value.status();
    *out = std::move(value).value();
  }
  Result<std::int64_t> case_index = RequiredInt(id, "case_index", where);
  if (!case_index.ok()) return case_index.status();
  record.case_index = static_cast<int>(case_index.value());
  Result<std::int64_t> rank = RequiredInt(id, "rank", where);
  if (!rank.ok()) return rank.status();
  record.rank = static_cast<int>(rank.value());
  Result<bool> tensors = h5::Exists(id, "outputs");
  if (!tensors.ok()) return tensors.status();
  stored.tensors = tensors.value();
  return stored;
}

// Every shard file in shards/, in (rank, k) order.
Result<std::vector<ShardName>> ListShards(const fs::path& shards) {
  std::vector<ShardName> names;
  std::error_code error;
  for (fs::directory_iterator it(shards, error), end; !error && it != end; it.increment(error)) {
    if (std::optional<ShardName> name = ParseShardFileName(it->path().filename().string())) {
      names.push_back(*name);
    }
  }
  if (error) return Status::IoError(shards.string() + ": cannot list: " + error.message());
  std::sort(names.begin(), names.end(),
            [](const ShardName& a, const ShardName& b) { return a.Order() < b.Order(); });
  return names;
}

// Every complete entry of every journal in shards/ (none when it is missing).
Result<std::vector<JournalEntry>> ReadJournals(const fs::path& shards) {
  std::vector<JournalEntry> entries;
  std::error_code error;
  if (!fs::exists(shards, error)) return entries;
  std::vector<std::string> journals;
  for (fs::directory_iterator it(shards, error), end; !error && it != end; it.increment(error)) {
    if (IsJournalFileName(it->path().filename().string())) journals.push_back(it->path().string());
  }
  if (error) return Status::IoError(shards.string() + ": cannot list: " + error.message());
  std::sort(journals.begin(), journals.end());
  for (const std::string& journal : journals) {
    Result<std::vector<JournalEntry>> read = ReadJournal(journal);
    if (!read.ok()) return read.status();
    entries.insert(entries.end(), read->begin(), read->end());
  }
  return entries;
}

// The shards of a run folder and its journaled cases, deduplicated, in
// (rank, k, n) order.
struct RunContents {
  std::vector<ShardName> shards;
  std::vector<StoredCase> cases;
};

Result<RunContents> ReadRunContents(const std::string& run_dir,
                                    std::vector<std::string>* problems) {
  const fs::path shards_dir = fs::path(run_dir) / kShardsFolder;
  RunContents contents;
  std::error_code error;
  if (!fs::exists(shards_dir, error)) {
    if (error) return Status::IoError(shards_dir.string() + ": " + error.message());
    return contents;
  }
  Result<std::vector<ShardName>> shards = ListShards(shards_dir);
  if (!shards.ok()) return shards.status();
  contents.shards = std::move(shards).value();
  Result<std::vector<JournalEntry>> entries = ReadJournals(shards_dir);
  if (!entries.ok()) return entries.status();

  // Journaled cases per shard file, by number.
  std::map<std::string, std::map<std::int64_t, JournalEntry>> journaled;
  for (const JournalEntry& entry : entries.value()) journaled[entry.shard][entry.n] = entry;
  for (const auto& [file, numbers] : journaled) {
    if (!ParseShardFileName(file) || !fs::exists(shards_dir / file, error)) {
      Status reported = Report(
          Status::NotFound((shards_dir / file).string() + ": " + std::to_string(numbers.size()) +
                           " journaled cases, but no such shard"),
          problems);
      if (!reported.ok()) return reported;
    }
  }

  for (const ShardName& shard : contents.shards) {
    const auto numbers = journaled.find(shard.file);
    if (numbers == journaled.end()) continue;
    const std::string path = (shards_dir / shard.file).string();
    Result<h5::Handle> file = OpenShardForReading(path);
    if (!file.ok()) {
      Status reported = Report(
          Status::IoError(file.status().message() + " (" + std::to_string(numbers->second.size()) +
                          " journaled cases unreadable)"),
          problems);
      if (!reported.ok()) return reported;
      continue;
    }
    Result<std::optional<std::string>> created = h5::ReadStringAttribute(file->id(), "created");
    if (!created.ok()) {
      Status reported = Report(created.status(), problems);
      if (!reported.ok()) return reported;
      continue;
    }
    for (const auto& [n, entry] : numbers->second) {
      Result<StoredCase> stored = ReadCase(file->id(), shard, entry);
      if (!stored.ok()) {
        Status reported = Report(stored.status(), problems);
        if (!reported.ok()) return reported;
        continue;
      }
      stored->created = created->value_or("");
      contents.cases.push_back(std::move(stored).value());
    }
  }

  // A case id stored more than once keeps its record from the latest shard
  // (ties: the later in (rank, k, n) order); the survivors keep their order.
  const auto later = [](const StoredCase& a, const StoredCase& b) {
    return std::make_tuple(a.created, a.shard.rank, a.shard.k, a.n) <
           std::make_tuple(b.created, b.shard.rank, b.shard.k, b.n);
  };
  std::map<std::string, std::size_t> latest;
  for (std::size_t i = 0; i < contents.cases.size(); ++i) {
    auto [it, inserted] = latest.emplace(contents.cases[i].record.case_id, i);
    if (!inserted && later(contents.cases[it->second], contents.cases[i])) it->second = i;
  }
  std::vector<StoredCase> kept;
  for (std::size_t i = 0; i < contents.cases.size(); ++i) {
    if (latest[contents.cases[i].record.case_id] == i) kept.push_back(std::move(contents.cases[i]));
  }
  contents.cases = std::move(kept);
  return contents;
}

// The root attributes, an empty /cases and an empty /table.
Status InitializeShard(hid_t root, const ShardName& name, StorePolicy policy) {
  Status status = WriteStrings(root, {{"format", "opverify-shard"},
                                      {"created", NowUtc()},
                                      {"policy", std::string(StorePolicyName(policy))}});
  if (!status.ok()) return status;
  for (const auto& [attribute, value] :
       {std::pair<const char*, std::int64_t>{"format_version", kFormatVersion},
        {"rank", name.rank},
        {"shard", name.k}}) {
    status = h5::WriteIntAttribute(root, attribute, value);
    if (!status.ok()) return status;
  }
  Result<h5::Handle> cases = h5::CreateGroup(root, kCasesGroup);
  if (!cases.ok()) return cases.status();
  Result<h5::Handle> table = CreateCaseTable(root, kShardTable, {}, kShardTableChunkRows);
  return table.ok() ? Status::Ok() : table.status();
}

// Creates the first free shard file of `rank` in `shards`, exclusively, so
// an existing shard (perhaps torn by a crash) is never written again. The
// empty shard is built in memory and written out whole: a full disk fails
// before anything is written.
Status CreateFreeShard(const fs::path& shards, int rank, StorePolicy policy, ShardName* name) {
  std::error_code error;
  for (int k = 0;; ++k) {
    *name = ShardName{rank, k, ShardFileName(rank, k)};
    const std::string path = (shards / name->file).string();
    if (fs::exists(path, error)) continue;
    std::vector<std::byte> image;
    {
      Result<h5::Handle> file = h5::CreateInMemoryFile(path);
      if (!file.ok()) return file.status();
      Status status = InitializeShard(file->id(), *name, policy);
      if (!status.ok()) return status;
      Result<std::vector<std::byte>> bytes = h5::FileImage(file->id());
      if (!bytes.ok()) return bytes.status();
      image = std::move(bytes).value();
    }
    Status written = WriteNewFile(path, image.data(), image.size(), /*exclusive=*/true);
    // Another writer took the name meanwhile: take the next.
    if (written.ok() || !fs::exists(path, error)) return written;
  }
}

}  // namespace

std::string_view StorePolicyName(StorePolicy policy) {
  switch (policy) {
    case StorePolicy::kAll:
      return "all";
    case StorePolicy::kFailures:
      return "failures";
    case StorePolicy::kNone:
      return "none";
  }
  return "unknown";
}

bool KeepsTensors(StorePolicy policy, bool passed) {
  return policy == StorePolicy::kAll || (policy == StorePolicy::kFailures && !passed);
}

std::optional<StorePolicy> ParseStorePolicy(std::string_view name) {
  for (StorePolicy policy : {StorePolicy::kAll, StorePolicy::kFailures, StorePolicy::kNone}) {
    if (StorePolicyName(policy) == name) return policy;
  }
  return std::nullopt;
}

struct ShardWriter::Impl {
  ShardName name;
  std::string path;
  StorePolicy policy = StorePolicy::kAll;
  Durability durability = Durability::kMachineCrash;
  std::optional<Journal> journal;
  std::int64_t next_n = 0;
  // Set when a write inside the shard failed: HDF5 may have left it half
  // updated, so nothing more is written to it.
  Status broken;

  // Returns the case group's address.
  Result<haddr_t> WriteCase(const CaseRecord& record, std::int64_t n,
                            const std::vector<std::pair<const char*, std::string>>& attributes,
                            bool tensors) const;
};

// The shard is opened for each case and closed after it: between cases it is
// a cleanly closed file, whatever happens to this process.
Result<haddr_t> ShardWriter::Impl::WriteCase(
    const CaseRecord& record, std::int64_t n,
    const std::vector<std::pair<const char*, std::string>>& attributes, bool tensors) const {
  Result<h5::Handle> file = h5::OpenFile(path, h5::FileMode::kReadWrite);
  if (!file.ok()) return file.status();
  const std::string group_path = CaseGroup(n);
  Result<h5::Handle> group = h5::CreateGroup(file->id(), group_path);
  if (!group.ok()) return group.status();
  Result<haddr_t> address = h5::ObjectAddress(group->id());
  if (!address.ok()) return address.status();
  Status status = WriteStrings(group->id(), attributes);
  if (!status.ok()) return status;
  status = h5::WriteIntAttribute(group->id(), "case_index", record.case_index);
  if (!status.ok()) return status;
  status = h5::WriteIntAttribute(group->id(), "rank", record.rank);
  if (!status.ok()) return status;
  for (std::size_t i = 0; tensors && i < record.tensors.size(); ++i) {
    const std::string output = "outputs/" + std::to_string(i) + "/";
    status = WriteH5Dataset(group.value(), output + "golden", record.tensors[i].first,
                            TensorStorage(record.tensors[i].first));
    if (!status.ok()) return status;
    status = WriteH5Dataset(group.value(), output + "actual", record.tensors[i].second,
                            TensorStorage(record.tensors[i].second));
    if (!status.ok()) return status;
  }
  Result<h5::Handle> table = h5::OpenDataset(file->id(), kShardTable);
  if (!table.ok()) return table.status();
  status = AppendCaseRow(table->id(), MakeCaseRow(record, name.k, n, group_path, tensors));
  if (!status.ok()) return status;
  status = durability == Durability::kMachineCrash ? h5::SyncFile(file->id())
                                                   : h5::FlushFile(file->id());
  if (!status.ok()) return status;
  return address;
}

ShardWriter::ShardWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
// The space reserved past the shard's end for a next case is given back.
// Best effort: a destructor has no one to tell, and the space left is at
// most one case's reservation.
ShardWriter::~ShardWriter() { ReleaseReservedSpace(impl_->path); }

const std::string& ShardWriter::path() const { return impl_->path; }

Result<std::unique_ptr<ShardWriter>> ShardWriter::Create(const std::string& run_dir, int rank,
                                                         StorePolicy policy,
                                                         Durability durability) {
  if (rank < 0) return Status::InvalidInput("shard writer: rank " + std::to_string(rank) + " < 0");
  const fs::path shards = fs::path(run_dir) / kShardsFolder;
  std::error_code error;
  fs::create_directories(shards, error);
  if (error) return Status::IoError(shards.string() + ": cannot create: " + error.message());

  auto impl = std::make_unique<Impl>();
  impl->policy = policy;
  impl->durability = durability;
  Status status = CreateFreeShard(shards, rank, policy, &impl->name);
  if (!status.ok()) return status;
  impl->path = (shards / impl->name.file).string();
  status = SyncDirectory(shards.string());
  if (!status.ok()) return status;

  Result<Journal> journal = Journal::Open((shards / JournalFileName(rank)).string());
  if (!journal.ok()) return journal.status();
  impl->journal.emplace(std::move(journal).value());
  return std::unique_ptr<ShardWriter>(new ShardWriter(std::move(impl)));
}

Status ShardWriter::Append(const CaseRecord& record) {
  if (record.case_id.empty()) return Status::InvalidInput(impl_->path + ": a case needs a case_id");
  if (!impl_->broken.ok()) {
    return Status::IoError(impl_->path + ": not written since an append failed (" +
                           impl_->broken.message() + "); create a new ShardWriter");
  }
  const std::vector<std::pair<const char*, std::string>> attributes = {
      {"case_id", ValidUtf8(record.case_id)},
      {"op_name", ValidUtf8(record.op_name)},
      {"params", JsonText(record.params)},
      {"input_desc", JsonText(record.input_desc)},
      {"verdict", record.passed ? "passed" : "failed"},
      {"route", ValidUtf8(record.route)},
      {"error_type", ValidUtf8(record.error_type)},
      {"error_msg", ValidUtf8(record.error_msg)},
      {"outputs", JsonText(record.outputs)},
      {"timings", JsonText(record.timings)},
      {"device", ValidUtf8(record.device)},
      {"ab", JsonText(record.ab)},
      {"extra", JsonText(record.extra)}};
  const bool tensors = KeepsTensors(impl_->policy, record.passed) && !record.tensors.empty();

  // HDF5 1.10 cannot take back a write that failed half way (a full disk
  // leaves a file it calls truncated, and a process that crashes at exit):
  // the space the case may need is allocated first, and when that fails
  // the shard is untouched. Generously: twice the payload, plus metadata
  // (B-tree nodes, heaps; the /cases name heap doubles as it grows).
  std::uint64_t payload = 0;
  for (const auto& attribute : attributes) payload += attribute.second.size() + 64;
  for (std::size_t i = 0; tensors && i < record.tensors.size(); ++i) {
    for (const TensorView* view : {&record.tensors[i].first, &record.tensors[i].second}) {
      payload += static_cast<std::uint64_t>(view->NumElements()) * DTypeSize(view->dtype) + 4096;
    }
  }
  const std::int64_t n = impl_->next_n;
  Status status =
      ReserveSpace(impl_->path, 2 * payload + (256 << 10) + 32 * static_cast<std::uint64_t>(n));
  if (!status.ok()) return status;

  ++impl_->next_n;  // never reused, even after a failure left a partial group
  Result<haddr_t> address = impl_->WriteCase(record, n, attributes, tensors);
  if (!address.ok()) {
    impl_->broken = address.status();
    return address.status();
  }
  return impl_->journal->Append({record.case_id, impl_->name.file, n, address.value()},
                                impl_->durability == Durability::kMachineCrash);
}

Result<std::set<std::string>> JournaledCases(const std::string& run_dir) {
  Result<std::vector<JournalEntry>> entries = ReadJournals(fs::path(run_dir) / kShardsFolder);
  if (!entries.ok()) return entries.status();
  std::set<std::string> ids;
  for (const JournalEntry& entry : entries.value()) ids.insert(entry.case_id);
  return ids;
}

Result<std::vector<CaseRecord>> ReadRunRecords(const std::string& run_dir,
                                               std::vector<std::string>* problems) {
  Result<RunContents> contents = ReadRunContents(run_dir, problems);
  if (!contents.ok()) return contents.status();
  std::vector<CaseRecord> records;
  records.reserve(contents->cases.size());
  for (StoredCase& stored : contents->cases) records.push_back(std::move(stored.record));
  return records;
}

namespace {

// results.h5, built in memory.
Result<std::vector<std::byte>> ResultsFileImage(const std::string& path,
                                                const RunContents& contents,
                                                const std::vector<std::string>& problems) {
  Result<h5::Handle> file = h5::CreateInMemoryFile(path);
  if (!file.ok()) return file.status();
  const hid_t root = file->id();
  std::int64_t passed = 0;
  for (const StoredCase& stored : contents.cases) passed += stored.record.passed ? 1 : 0;
  Status status = WriteStrings(
      root,
      {{"format", "opverify-results"}, {"created", NowUtc()}, {"problems", JsonText(problems)}});
  if (!status.ok()) return status;
  const std::int64_t total = static_cast<std::int64_t>(contents.cases.size());
  for (const auto& [attribute, value] :
       {std::pair<const char*, std::int64_t>{"format_version", kFormatVersion},
        {"cases", total},
        {"passed", passed},
        {"failed", total - passed}}) {
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
  rows.reserve(contents.cases.size());
  for (const StoredCase& stored : contents.cases) {
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

namespace {

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
          Report(Status::NotFound((from / entry.shard).string() + ": journaled case " +
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
