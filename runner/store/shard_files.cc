#include "runner/store/shard_files.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <string_view>
#include <system_error>

#include "runner/common/strings.h"

namespace opverify {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

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

bool IsJournalFileName(const std::string& file) {
  std::string_view rest;
  return ParseRank(file, ".journal", &rest) && rest.empty();
}

constexpr char kKindKey[] = "kind";

}  // namespace

std::string ShardFileName(int rank, int k) {
  return k == 0 ? Printf("rank-%04d.h5", rank) : Printf("rank-%04d.%d.h5", rank, k);
}

std::string JournalFileName(int rank) { return Printf("rank-%04d.journal", rank); }

std::string CaseGroup(std::int64_t n) {
  return std::string(kCasesGroup) + Printf("/%06lld", static_cast<long long>(n));
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

Result<std::vector<JournalEntry>> ReadJournals(const fs::path& shards,
                                               std::vector<std::string>* problems) {
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
    if (!read.ok()) {
      // Its cases are lost to the reader: what it promised is unknown.
      Status reported = ReportProblem(
          Status::IoError(read.status().message() + " (every case it journaled is unreadable)"),
          problems);
      if (!reported.ok()) return reported;
      continue;
    }
    entries.insert(entries.end(), read->begin(), read->end());
  }
  return entries;
}

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

Status WriteStrings(hid_t object, const std::vector<std::pair<const char*, std::string>>& values) {
  for (const auto& [name, value] : values) {
    Status written = h5::WriteStringAttribute(object, name, value);
    if (!written.ok()) return written;
  }
  return Status::Ok();
}

Result<json> StoredExtra(const CaseRecord& record) {
  if (record.extra.is_object() && record.extra.contains(kKindKey)) {
    return Status::InvalidInput(record.case_id +
                                ": extra holds \"kind\", which is the record's kind when stored");
  }
  if (record.kind != RecordKind::kCase && !record.extra.is_object() && !record.extra.is_null()) {
    return Status::InvalidInput(record.case_id + ": extra is not an object: a " +
                                std::string(RecordKindName(record.kind)) +
                                " record keeps its content there");
  }
  json extra = record.extra;
  if (record.kind != RecordKind::kCase) extra[kKindKey] = std::string(RecordKindName(record.kind));
  return extra;
}

Result<RecordKind> TakeRecordKind(json* extra, const std::string& where) {
  if (!extra->is_object() || !extra->contains(kKindKey)) return RecordKind::kCase;
  const json& name = (*extra)[kKindKey];
  const std::optional<RecordKind> kind =
      name.is_string() ? ParseRecordKind(name.get<std::string>()) : std::nullopt;
  if (!kind) {
    return Status::InvalidInput(where + ": extra's \"kind\" " + JsonText(name) +
                                " is no record kind");
  }
  extra->erase(kKindKey);
  return *kind;
}

Status ReportProblem(const Status& problem, std::vector<std::string>* problems) {
  if (problems == nullptr) return problem;
  problems->push_back(problem.ToString());
  return Status::Ok();
}

}  // namespace opverify
