#include "runner/store/shard_writer.h"

#include <spdlog/spdlog.h>

#include <cstdint>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "runner/common/strings.h"
#include "runner/h5/h5.h"
#include "runner/store/case_table.h"
#include "runner/store/durable_file.h"
#include "runner/store/journal.h"
#include "runner/store/shard_files.h"
#include "runner/store/tensor_storage.h"
#include "runner/tensor_io/h5_tensor.h"

namespace opverify {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kShardTable[] = "/table";
// A row is about 200 bytes in the file: a chunk of 64 rows is a 13 KiB write.
constexpr hsize_t kShardTableChunkRows = 64;

// `text` with invalid UTF-8 replaced by U+FFFD: attributes are UTF-8 strings,
// and an operator's error message may hold any bytes.
std::string ValidUtf8(const std::string& text) {
  return json::parse(JsonText(text)).get<std::string>();
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
// Best effort: a destructor has no one to tell but the log, and the space
// left is at most one case's reservation.
ShardWriter::~ShardWriter() {
  if (const Status released = ReleaseReservedSpace(impl_->path); !released.ok())
    spdlog::warn("{}", released.message());
}

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
  Result<json> extra = StoredExtra(record);
  if (!extra.ok()) return Status::InvalidInput(impl_->path + ": " + extra.status().message());
  const std::vector<std::pair<const char*, std::string>> attributes = {
      {"case_id", ValidUtf8(record.case_id)},
      {"op_name", ValidUtf8(record.op_name)},
      {"params", JsonText(record.params)},
      {"input_desc", JsonText(record.input_desc)},
      {"verdict", !record.passed  ? "failed"
                  : record.waived ? "waived"
                                  : "passed"},
      {"route", ValidUtf8(record.route)},
      {"error_type", ValidUtf8(record.error_type)},
      {"error_msg", ValidUtf8(record.error_msg)},
      {"outputs", JsonText(record.outputs)},
      {"timings", JsonText(record.timings)},
      {"device", ValidUtf8(record.device)},
      {"ab", JsonText(record.ab)},
      {"extra", JsonText(extra.value())}};
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

}  // namespace opverify
