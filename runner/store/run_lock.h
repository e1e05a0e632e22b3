// One writer per run folder: <run folder>/run.lock. The holder keeps an
// exclusive flock() on it and writes who it is inside (host, pid, the pid's
// start time, boot id, program, since when), because flock() is only
// advisory over NFS: a second run on another host still reads a live
// holder there. A clean release empties the file; a killed holder leaves
// its record, which a later run breaks only when it is provably stale: the
// same host (and boot), and that pid not alive or a different process now.
// A holder on another host is never second-guessed: the message says which
// file to remove once that run is known to be gone.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "runner/common/status.h"

namespace opverify {

inline constexpr char kRunLockFile[] = "run.lock";

// Who holds (or last held) a run folder.
struct LockHolder {
  std::string host;
  long pid = 0;
  std::string pid_start;  // /proc/<pid>/stat's start time (clock ticks since boot)
  std::string boot_id;    // /proc/sys/kernel/random/boot_id
  std::string program;    // "opverify-batch", "opverify-reduce"
  std::string since;      // UTC, when it took the lock
};

// "pid 123 on host h (opverify-batch, since 2026-12-01T10:00:00Z)".
std::string DescribeHolder(const LockHolder& holder);

// The holder record a lock file holds; nullopt for an empty (released) or
// unparsable file.
std::optional<LockHolder> ParseLockHolder(const std::string& text);
std::string LockHolderText(const LockHolder& holder);

enum class LockDecision { kTake, kBreakStale, kRefuse };

// Whether `me` may take a run folder's lock (a pure function: the rule
// above). `got_flock`: our flock() succeeded; `recorded`: what the file
// holds; `start_of`: the start time of a live pid on this host, nullopt
// when no such process exists.
LockDecision DecideLock(bool got_flock, const std::optional<LockHolder>& recorded,
                        const LockHolder& me,
                        const std::function<std::optional<std::string>(long pid)>& start_of);

// This process as a holder.
LockHolder ThisProcess(const std::string& program);

class RunLock {
 public:
  // Takes `run_dir`'s lock for `program` (the folder must exist). A live
  // holder is InvalidInput naming it and the lock file; a stale record is
  // broken, with `*broke` (when given) describing whose it was.
  static Result<RunLock> Acquire(const std::string& run_dir, const std::string& program,
                                 std::string* broke = nullptr);
  RunLock() = default;
  RunLock(RunLock&& other) noexcept;
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock();  // releases: empties the file, then unlocks
  bool held() const { return fd_ >= 0; }

 private:
  explicit RunLock(int fd) : fd_(fd) {}
  void Release();
  int fd_ = -1;
};

}  // namespace opverify
