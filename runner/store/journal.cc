#include "runner/store/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "runner/common/json_text.h"
#include "runner/store/durable_file.h"

namespace opverify {
namespace {

Status Errno(const std::string& path, const char* what) {
  return Status::IoError(path + ": " + what + ": " + std::strerror(errno));
}

// Cuts `fd`'s file back to just after its last '\n' (to nothing when it has
// none): the torn line a crash mid-append leaves is dropped.
Status CutTornLine(int fd, const std::string& path) {
  struct stat info {};
  if (fstat(fd, &info) != 0) return Errno(path, "fstat failed");
  off_t end = info.st_size;
  char block[4096];
  while (end > 0) {
    const off_t begin =
        end > static_cast<off_t>(sizeof block) ? end - static_cast<off_t>(sizeof block) : 0;
    const ssize_t got = pread(fd, block, static_cast<std::size_t>(end - begin), begin);
    if (got != end - begin) return Errno(path, "read failed");
    const void* newline = memrchr(block, '\n', static_cast<std::size_t>(got));
    if (newline != nullptr) {
      end = begin + (static_cast<const char*>(newline) - block) + 1;
      break;
    }
    end = begin;
  }
  if (end == info.st_size) return Status::Ok();
  if (ftruncate(fd, end) != 0) return Errno(path, "cutting off a torn last line failed");
  if (fsync(fd) != 0) return Errno(path, "fsync failed");
  return Status::Ok();
}

}  // namespace

Result<Journal> Journal::Open(const std::string& path) {
  std::error_code error;
  const bool existed = std::filesystem::exists(path, error);
  Result<int> opened =
      OpenRegularFile(path, O_RDWR | O_CREAT | O_APPEND, "cannot open the journal");
  if (!opened.ok()) return opened.status();
  Journal journal(opened.value(), path);
  Status cut = CutTornLine(opened.value(), path);
  if (!cut.ok()) return cut;
  if (!existed) {
    Status synced = SyncDirectory(std::filesystem::path(path).parent_path().string());
    if (!synced.ok()) return synced;
  }
  return journal;
}

Journal::Journal(Journal&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

Journal& Journal::operator=(Journal&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

Journal::~Journal() {
  if (fd_ >= 0) close(fd_);
}

Status Journal::Append(const JournalEntry& entry, bool sync) {
  const std::string line = JsonText({{"case_id", entry.case_id},
                                     {"shard", entry.shard},
                                     {"n", entry.n},
                                     {"address", entry.address}}) +
                           "\n";
  struct stat info {};
  if (fstat(fd_, &info) != 0) return Errno(path_, "fstat failed");
  std::size_t written = 0;
  Status failure;
  while (written < line.size()) {
    const ssize_t n = write(fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failure = Errno(path_, "write failed");
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  if (failure.ok() && sync && fsync(fd_) != 0) failure = Errno(path_, "fsync failed");
  if (!failure.ok()) {
    // Leave no partial line behind: the next entry must start on its own line.
    if (ftruncate(fd_, info.st_size) != 0) return failure;
    fsync(fd_);
  }
  return failure;
}

Result<std::vector<JournalEntry>> ReadJournal(const std::string& path) {
  // POSIX reads, not an ifstream: a journal that is a folder or unreadable
  // must be an error naming it, never an exception from inside the stream.
  Result<int> opened = OpenRegularFile(path, O_RDONLY, "cannot read the journal");
  if (!opened.ok()) return opened.status();
  const int fd = opened.value();
  std::string text;
  char block[65536];
  for (;;) {
    const ssize_t got = read(fd, block, sizeof block);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const Status failed = Errno(path, "cannot read the journal");
      close(fd);
      return failed;
    }
    if (got == 0) break;
    text.append(block, static_cast<std::size_t>(got));
  }
  close(fd);
  std::vector<JournalEntry> entries;
  std::size_t begin = 0;
  int line_number = 0;
  for (std::size_t end; (end = text.find('\n', begin)) != std::string::npos; begin = end + 1) {
    ++line_number;
    if (end == begin) continue;
    const std::string where = path + ":" + std::to_string(line_number);
    const nlohmann::json line = nlohmann::json::parse(
        text.begin() + static_cast<std::ptrdiff_t>(begin),
        text.begin() + static_cast<std::ptrdiff_t>(end), nullptr, /*allow_exceptions=*/false);
    if (!line.is_object() || !line.contains("case_id") || !line["case_id"].is_string() ||
        !line.contains("shard") || !line["shard"].is_string() || !line.contains("n") ||
        !line["n"].is_number_integer()) {
      return Status::InvalidInput(where + ": not a journal entry {\"case_id\", \"shard\", \"n\"}");
    }
    JournalEntry entry{line["case_id"].get<std::string>(), line["shard"].get<std::string>(),
                       line["n"].get<std::int64_t>()};
    if (line.contains("address") && line["address"].is_number_unsigned()) {
      entry.address = line["address"].get<std::uint64_t>();
    }
    entries.push_back(std::move(entry));
  }
  // Whatever follows the last '\n' is a torn line: not journaled.
  return entries;
}

}  // namespace opverify
