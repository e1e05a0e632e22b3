// Starting and stopping child processes: the one place opverify launches
// programs (executors, npu-smi for the device clock, and tests' helpers),
// with posix_spawn only: a rank holds MPI and may hold CUDA, neither of which
// survives into a fork()ed child that goes on working. The tree's three
// fork()s are not that: the sandbox's init (process/sandbox_main.cc, a
// single-threaded helper with neither MPI nor CUDA) forks the child that
// execs the executor, and two readers of files libhdf5 may crash on run one
// read in a child that only reads and _exit()s (tensor_io/isolated_read.cc
// for `opverify compare`'s HDF5 tensors, store/run_records.cc for a run's
// shards).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/common/status.h"

namespace opverify {

// The child starts with an empty signal mask and default SIGTERM, SIGINT,
// SIGPIPE, SIGCHLD, SIGHUP and SIGQUIT, whatever the parent blocks or ignores.
struct SpawnOptions {
  // argv[0]: the program's path, searched in the parent's PATH if it has no '/'.
  std::vector<std::string> argv;
  // The parent's environment less env_unset, then env_set (the last of one name wins).
  std::vector<std::pair<std::string, std::string>> env_set;
  std::vector<std::string> env_unset;
  std::string working_dir;  // empty: the parent's; a relative argv[0] with '/' resolves in it
  // Empty: inherit; else truncated and written (relative to the parent's cwd).
  std::string stdout_path;
  std::string stderr_path;  // empty: inherit; "=stdout" merges into stdout
  // {parent fd, child fd}: dup'd into the child without close-on-exec; child fds must be distinct
  // and may be any numbers, even ones the parent uses for other mappings' sources. Every other
  // descriptor above 2 is closed in the child, inherited or not (an MPI rank's sockets, its log).
  std::vector<std::pair<int, int>> fds;
  bool new_process_group = true;  // the child leads its own group, so the whole tree can be killed
  bool new_session = false;       // its own session (setsid): no terminal, no job-control signals
};

struct ExitStatus {
  bool exited =
      false;  // normal exit (code), else killed by a signal (signal 0: unknown, reaped elsewhere)
  int code = 0;
  int signal = 0;
  bool core_dumped = false;
  bool success() const { return exited && code == 0; }
  std::string Describe() const;  // "exit code 3", "signal SIGSEGV (11)", "... (core dumped)"
};

std::string SignalName(
    int signal);  // "SIGSEGV", "SIGRTMIN+2"; "unknown" for a number no signal has

class Subprocess {
 public:
  // A Status naming the program (and errno's text) when it cannot be started.
  static Result<Subprocess> Spawn(const SpawnOptions& options);
  Subprocess(Subprocess&& other) noexcept;  // `other` is left empty: not running, pid -1
  Subprocess& operator=(
      Subprocess&& other) noexcept;  // kills and reaps a child this one still runs
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  // A child still running is killed (its group with SIGKILL) and reaped.
  ~Subprocess();

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0 && !status_; }

  // Waits up to timeout_s (nullopt: forever); nullopt if it is still running
  // (or this object is empty). Reaps the child and keeps its status; kills nothing.
  std::optional<ExitStatus> Wait(std::optional<double> timeout_s = std::nullopt);
  // SIGTERM to the process group, up to grace_s for it to end, then SIGKILL;
  // once the leader is reaped, SIGKILL to what is left of its group. On a
  // child already reaped by Wait it only returns the status (the group's id
  // may belong to someone else by then).
  ExitStatus Terminate(double grace_s = 2.0);

 private:
  explicit Subprocess(pid_t pid, bool group) : pid_(pid), group_(group) {}
  void Signal(int signal) const;
  void KillGroupLeftovers() const;
  void KillAndReap();
  pid_t pid_ = -1;
  bool group_ = true;
  std::optional<ExitStatus> status_;
};

// Every process that descends from `root` (its children, theirs, and orphans re-parented to an
// init that descends from it, as in a PID namespace it set up), read from /proc now; `root` not
// included. A process forked after the read is not in it.
std::vector<pid_t> Descendants(pid_t root);

// A program run to its end with what it prints: stdout and stderr together,
// up to max_output_bytes (the rest is read and dropped, so the program never
// blocks on a full pipe).
struct CapturedRun {
  ExitStatus status;
  std::string output;
  bool timed_out = false;  // killed (Terminate) after timeout_s
};

// Runs `options.argv` with stdin on /dev/null and stdout/stderr captured
// (options' own stdout/stderr paths and fds are replaced). After timeout_s the
// whole process group gets Terminate(grace_s). A program that cannot be
// started is Spawn's Status (NotFound when it does not exist).
Result<CapturedRun> RunAndCapture(SpawnOptions options, double timeout_s, double grace_s,
                                  std::size_t max_output_bytes);

}  // namespace opverify
