#include "runner/store/run_records.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <system_error>
#include <tuple>
#include <utility>

#include "runner/h5/h5.h"
#include "runner/process/subprocess.h"
#include "runner/store/durable_file.h"
#include "runner/store/journal.h"
#include "runner/store/record_fields.h"

namespace opverify {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Opens a shard read-only. HDF5 takes a shared flock(); when that is refused
// (a writer still holds the file, or flock does not work on this file
// system) it retries without locking, as HDF5_USE_FILE_LOCKING=FALSE does.
// Our shards use HDF5's earliest file format, which keeps no "open for
// write" flag, so a file whose writer was killed opens as it is; a file in
// the latest format (superblock 3) would need `h5clear -s` first.
Result<h5::Handle> OpenShardForReading(const std::string& path) {
  // libhdf5 opens by name, following links and waiting on a FIFO: what is
  // there is checked first, without either.
  Result<int> regular = OpenRegularFile(path, O_RDONLY, "cannot read the shard");
  if (!regular.ok()) return regular.status();
  close(regular.value());
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

// "<op>/#<digits>" -> the digits' value; -1 for any other id.
long long OwnCaseNumber(const std::string& id, const std::string& op_name) {
  const std::string prefix = op_name + "/#";
  if (id.size() <= prefix.size() || id.compare(0, prefix.size(), prefix) != 0 ||
      id.size() - prefix.size() > 9) {
    return -1;
  }
  long long number = 0;
  for (std::size_t i = prefix.size(); i < id.size(); ++i) {
    if (id[i] < '0' || id[i] > '9') return -1;
    number = number * 10 + (id[i] - '0');
  }
  return number;
}

// A format_version 1 shard numbered a task's own cases from 0 ("op/#0" was
// the first): its ids become today's ("op/#1"), so reports, --resume and
// --rerun-failed see old and new folders alike.
void RenumberFormat1Ids(CaseRecord* record) {
  const auto renumbered = [&](const std::string& id) {
    const long long number = OwnCaseNumber(id, record->op_name);
    return number < 0 ? id : record->op_name + "/#" + std::to_string(number + 1);
  };
  if (record->kind == RecordKind::kCase) {
    record->case_id = renumbered(record->case_id);
  } else if (record->kind == RecordKind::kBenchShape && record->extra.is_object() &&
             record->extra.value("case_id", json()).is_string()) {
    const std::string id = renumbered(record->extra["case_id"].get<std::string>());
    record->extra["case_id"] = id;
    record->case_id = id + "@bench";
  }
}

// Reads a journaled record of an open shard.
Result<StoredRecord> ReadRecord(hid_t file, const ShardName& shard, const JournalEntry& entry) {
  const std::int64_t n = entry.n;
  Result<h5::Handle> group = OpenCaseGroup(file, entry);
  if (!group.ok()) return group.status();
  const hid_t id = group->id();
  StoredRecord stored;
  stored.shard = shard;
  stored.n = n;
  CaseRecord& record = stored.record;
  record.stored_at = std::string(kShardsFolder) + "/" + shard.file + ":" + CaseGroup(n);

  const std::string& where = record.stored_at;
  Result<std::string> verdict = RequiredString(id, "verdict", where);
  if (!verdict.ok()) return verdict.status();
  record.waived = verdict.value() == "waived";  // format_version 3 on
  record.passed = verdict.value() == "passed" || record.waived;
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
  Result<RecordKind> kind = TakeRecordKind(&record.extra, where);
  if (!kind.ok()) return kind.status();
  record.kind = kind.value();
  if (Status typed = CheckRecordFields(record, where + " (" + record.case_id + ")"); !typed.ok())
    return typed;
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

// How long a shard's reader may go without reading a record before it is
// taken for stuck (libhdf5 loops on some damaged files).
constexpr int kReaderIdleLimitMs = 60 * 1000;

// Runs `read` in a forked child, which calls its argument after each
// record: Ok when the child ends by itself, an IoError naming `path` when it
// dies of a signal (libhdf5 trusts what a file says about itself: a damaged
// global heap makes it follow a wild address) or reads nothing for
// kReaderIdleLimitMs. Nothing the child does reaches this process.
Status SurvivesReading(const std::string& path,
                       const std::function<void(const std::function<void()>&)>& read) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return Status::IoError(path + ": cannot make a pipe for its reader: " + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(fds[0]);
    close(fds[1]);
    return Status::IoError(path + ": cannot start its reader: " + std::strerror(error));
  }
  if (pid == 0) {
    // The caller's handlers (a stop flag, a sanitizer's report) are not the
    // reader's: a crash is a plain death.
    for (int signal = 1; signal < NSIG; ++signal) {
      if (signal != SIGKILL && signal != SIGSTOP) std::signal(signal, SIG_DFL);
    }
    close(fds[0]);
    read([fd = fds[1]] {
      const char tick = '.';
      if (write(fd, &tick, 1) < 0) _exit(1);
    });
    _exit(0);
  }
  close(fds[1]);
  bool stuck = false;
  for (char buffer[4096];;) {
    pollfd ready{fds[0], POLLIN, 0};
    const int polled = poll(&ready, 1, kReaderIdleLimitMs);
    if (polled < 0 && errno == EINTR) continue;
    if (polled == 0) stuck = true;
    if (polled <= 0) break;
    const ssize_t got = ::read(fds[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // the child is done (or gone)
  }
  close(fds[0]);
  if (stuck) kill(pid, SIGKILL);
  int raw = 0;
  while (waitpid(pid, &raw, 0) < 0 && errno == EINTR) {
  }
  if (stuck) {
    return Status::IoError(path + ": its reader read nothing for " +
                           std::to_string(kReaderIdleLimitMs / 1000) +
                           " s and was killed: the shard is corrupt");
  }
  if (WIFEXITED(raw) && WEXITSTATUS(raw) == 0) return Status::Ok();
  const std::string how = WIFSIGNALED(raw) ? "signal " + SignalName(WTERMSIG(raw)) + " (" +
                                                 std::to_string(WTERMSIG(raw)) + ")"
                                           : "exit code " + std::to_string(WEXITSTATUS(raw));
  return Status::IoError(path + ": reading it crashed its reader (" + how +
                         "): the shard is corrupt");
}

// The journaled records `numbers` of the shard at `path`, appended to
// *out; `tick` is called after each. A record that cannot be read is a
// problem (ReportProblem); a shard that cannot be opened at all, or is newer
// than this reader, is the error returned.
Status ReadShard(const std::string& path, const ShardName& shard,
                 const std::map<std::int64_t, JournalEntry>& numbers,
                 std::vector<StoredRecord>* out, std::vector<std::string>* problems,
                 const std::function<void()>& tick) {
  Result<h5::Handle> file = OpenShardForReading(path);
  if (!file.ok()) return file.status();
  Result<std::optional<std::string>> created = h5::ReadStringAttribute(file->id(), "created");
  Result<std::optional<std::int64_t>> version = h5::ReadIntAttribute(file->id(), "format_version");
  if (!created.ok()) return created.status();
  if (!version.ok()) return version.status();
  const std::int64_t format = version->value_or(1);
  if (format > kFormatVersion) {
    return Status::InvalidInput(path + ": format_version " + std::to_string(format) +
                                ", newer than this opverify reads (" +
                                std::to_string(kFormatVersion) + ")");
  }
  for (const auto& [n, entry] : numbers) {
    Result<StoredRecord> stored = ReadRecord(file->id(), shard, entry);
    tick();
    if (!stored.ok()) {
      Status reported = ReportProblem(stored.status(), problems);
      if (!reported.ok()) return reported;
      continue;
    }
    stored->created = created->value_or("");
    if (format < 2) RenumberFormat1Ids(&stored->record);
    out->push_back(std::move(stored).value());
  }
  return Status::Ok();
}

}  // namespace

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
  Result<std::vector<JournalEntry>> entries = ReadJournals(shards_dir, problems);
  if (!entries.ok()) return entries.status();

  // Journaled cases per shard file, by number.
  std::map<std::string, std::map<std::int64_t, JournalEntry>> journaled;
  for (const JournalEntry& entry : entries.value()) journaled[entry.shard][entry.n] = entry;
  for (const auto& [file, numbers] : journaled) {
    if (!ParseShardFileName(file) || !fs::exists(shards_dir / file, error)) {
      Status reported = ReportProblem(
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
    // Read in a child first: a shard that crashes or stalls libhdf5 is a
    // problem naming it, and this process never opens it.
    Status survived = SurvivesReading(path, [&](const std::function<void()>& tick) {
      std::vector<StoredRecord> records;
      std::vector<std::string> lines;
      // Whether the read fails is the read's below to say: this one asks only
      // whether reading survives.
      if (!ReadShard(path, shard, numbers->second, &records, &lines, tick).ok()) return;
    });
    if (survived.ok()) {
      survived = ReadShard(path, shard, numbers->second, &contents.records, problems, [] {});
    }
    if (!survived.ok()) {
      Status reported = ReportProblem(
          Status::IoError(survived.message() + " (" + std::to_string(numbers->second.size()) +
                          " journaled cases unreadable)"),
          problems);
      if (!reported.ok()) return reported;
    }
  }

  // A case id stored more than once keeps its record from the latest shard
  // (ties: the later in (rank, k, n) order); the survivors keep their order.
  const auto later = [](const StoredRecord& a, const StoredRecord& b) {
    return std::make_tuple(a.created, a.shard.rank, a.shard.k, a.n) <
           std::make_tuple(b.created, b.shard.rank, b.shard.k, b.n);
  };
  std::map<std::string, std::size_t> latest;
  for (std::size_t i = 0; i < contents.records.size(); ++i) {
    auto [it, inserted] = latest.emplace(contents.records[i].record.case_id, i);
    if (!inserted && later(contents.records[it->second], contents.records[i])) it->second = i;
  }
  std::vector<StoredRecord> kept;
  for (std::size_t i = 0; i < contents.records.size(); ++i) {
    if (latest[contents.records[i].record.case_id] == i) kept.push_back(std::move(contents.records[i]));
  }
  contents.records = std::move(kept);
  return contents;
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
  records.reserve(contents->records.size());
  for (StoredRecord& stored : contents->records) records.push_back(std::move(stored.record));
  return records;
}

}  // namespace opverify
