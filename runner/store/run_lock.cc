#include "runner/store/run_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "runner/common/json_text.h"
#include "runner/store/shard_files.h"

namespace opverify {
namespace {

using nlohmann::json;

// The first line of a small /proc file, "" when it cannot be read.
std::string ProcLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

// Field 22 of /proc/<pid>/stat (the start time), counted after the command
// name, which is in parentheses and may hold spaces; nullopt: no such process.
std::optional<std::string> ProcessStart(long pid) {
  const std::string stat = ProcLine("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) {
    // No /proc entry: ask the kernel whether the pid exists at all.
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) return std::string();
    return std::nullopt;
  }
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int k = 3; k <= 22 && (fields >> field); ++k) {
  }
  return field;
}

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

Status Errno(const std::string& path, const char* what) {
  return Status::IoError(path + ": " + what + ": " + std::strerror(errno));
}

std::string ReadAll(int fd) {
  std::string text;
  char block[4096];
  for (off_t at = 0;;) {
    const ssize_t got = pread(fd, block, sizeof block, at);
    if (got <= 0) break;
    text.append(block, static_cast<std::size_t>(got));
    at += got;
    if (text.size() > 65536) break;  // a holder record is a line; the rest is not ours
  }
  return text;
}

}  // namespace

std::string DescribeHolder(const LockHolder& holder) {
  return "pid " + std::to_string(holder.pid) + " on host " + holder.host + " (" +
         (holder.program.empty() ? "?" : holder.program) + ", since " +
         (holder.since.empty() ? "?" : holder.since) + ")";
}

std::optional<LockHolder> ParseLockHolder(const std::string& text) {
  const json record = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!record.is_object() || !record.contains("host") || !record["host"].is_string() ||
      !record.contains("pid") || !record["pid"].is_number_integer()) {
    return std::nullopt;
  }
  LockHolder holder;
  holder.host = record["host"].get<std::string>();
  holder.pid = record["pid"].get<long>();
  const auto text_of = [&](const char* key) {
    return record.contains(key) && record[key].is_string() ? record[key].get<std::string>() : "";
  };
  holder.pid_start = text_of("pid_start");
  holder.boot_id = text_of("boot_id");
  holder.program = text_of("program");
  holder.since = text_of("since");
  return holder;
}

std::string LockHolderText(const LockHolder& holder) {
  return JsonText({{"host", holder.host},
                   {"pid", holder.pid},
                   {"pid_start", holder.pid_start},
                   {"boot_id", holder.boot_id},
                   {"program", holder.program},
                   {"since", holder.since}}) +
         "\n";
}

LockDecision DecideLock(bool got_flock, const std::optional<LockHolder>& recorded,
                        const LockHolder& me,
                        const std::function<std::optional<std::string>(long pid)>& start_of) {
  if (!got_flock) return LockDecision::kRefuse;  // a live holder that flock() sees
  if (!recorded) return LockDecision::kTake;     // released, or never held
  // flock() is ours but a record is there: its holder was killed, or holds
  // the lock from a host whose flock() we cannot see (NFS).
  if (recorded->host != me.host) return LockDecision::kRefuse;
  if (!recorded->boot_id.empty() && !me.boot_id.empty() && recorded->boot_id != me.boot_id)
    return LockDecision::kBreakStale;  // the machine rebooted since
  if (recorded->pid == me.pid && recorded->pid_start == me.pid_start) return LockDecision::kTake;
  const std::optional<std::string> start = start_of(recorded->pid);
  if (!start) return LockDecision::kBreakStale;  // no such process
  if (!recorded->pid_start.empty() && !start->empty() && *start != recorded->pid_start)
    return LockDecision::kBreakStale;  // the pid was reused by another process
  return LockDecision::kRefuse;
}

LockHolder ThisProcess(const std::string& program) {
  LockHolder me;
  me.host = HostName();
  me.pid = static_cast<long>(getpid());
  me.pid_start = ProcessStart(me.pid).value_or("");
  me.boot_id = ProcLine("/proc/sys/kernel/random/boot_id");
  me.program = program;
  me.since = NowUtc();
  return me;
}

Result<RunLock> RunLock::Acquire(const std::string& run_dir, const std::string& program,
                                 std::string* broke) {
  const std::string path = (std::filesystem::path(run_dir) / kRunLockFile).string();
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return Errno(path, "cannot open the run folder's lock");
  RunLock lock(fd);
  bool got_flock = flock(fd, LOCK_EX | LOCK_NB) == 0;
  if (!got_flock && errno != EWOULDBLOCK) {
    if (errno != ENOLCK && errno != EOPNOTSUPP) return Errno(path, "flock failed");
    got_flock = true;  // a file system without flock(): the record inside decides alone
  }
  const std::string text = ReadAll(fd);
  const std::optional<LockHolder> recorded = ParseLockHolder(text);
  const LockHolder me = ThisProcess(program);
  switch (DecideLock(got_flock, recorded, me, ProcessStart)) {
    case LockDecision::kRefuse: {
      lock.fd_ = -1;  // not ours: leave the file as it is
      close(fd);
      const std::string who = recorded
                                  ? DescribeHolder(*recorded)
                                  : std::string("another process (its record is being written)");
      std::string advice = "wait for it to end, or use another run folder";
      if (recorded && recorded->host != me.host) {
        advice += "; if that run is gone (this host cannot check), remove " + path;
      }
      return Status::InvalidInput(run_dir + " is in use by " + who + ": " + advice);
    }
    case LockDecision::kBreakStale:
      if (broke != nullptr) *broke = DescribeHolder(*recorded);
      break;
    case LockDecision::kTake:
      break;
  }
  const std::string mine = LockHolderText(me);
  if (ftruncate(fd, 0) != 0) return Errno(path, "cannot write the lock");
  if (pwrite(fd, mine.data(), mine.size(), 0) != static_cast<ssize_t>(mine.size()))
    return Errno(path, "cannot write the lock");
  if (fsync(fd) != 0) return Errno(path, "fsync failed");
  return lock;
}

RunLock::RunLock(RunLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

RunLock::~RunLock() { Release(); }

void RunLock::Release() {
  if (fd_ < 0) return;
  // Emptied first, so that nobody reads a holder that is gone.
  if (ftruncate(fd_, 0) == 0) fsync(fd_);
  close(fd_);  // drops the flock
  fd_ = -1;
}

}  // namespace opverify
