// The parent's side of an executor process (executor_main.cc): start it,
// send a request, wait for the reply with a deadline, and see its tensors.
// A hang is stopped (SIGTERM, then SIGKILL to its process group) and a death
// is reported with its signal and the tail of its output; the caller decides
// to start a new one. Operator code only ever runs in the executor.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/status.h"
#include "runner/executor/protocol.h"
#include "runner/process/capped_log.h"
#include "runner/process/sandbox.h"
#include "runner/process/subprocess.h"
#include "runner/tensor/tensor_view.h"

namespace opverify {

struct ExecutorOptions {
  std::string program;                                   // empty: DefaultExecutorProgram()
  std::vector<std::pair<std::string, std::string>> env;  // e.g. TRITON_CACHE_DIR
  std::string log_path;        // the executor's stdout and stderr (appended by each start, capped)
  SandboxSettings sandbox;     // how it is confined (docs/SECURITY.md)
  std::string scratch_parent;  // its scratch folder is made here; empty: the temp folder
  // A run's stop signal (SIGTERM, SIGUSR1): once set, a call in flight stops
  // waiting, the executor is killed and the call ends kStopped. Null: none.
  const std::atomic<int>* stop = nullptr;
};

// An operator's allowance for the time its executors say they spend warming
// up (compiling, autotuning: warm-up events on the reply pipe, see
// protocol.h), which is kept out of each call's timeout until the allowance
// is spent. The executor is not trusted: whatever it claims, one operator
// gets at most this many seconds beyond its calls' timeouts.
struct WarmupAllowance {
  double left_s = 0;
  double spent_s = 0;
};

// OPVERIFY_EXECUTOR, else opverify-executor beside the running program.
std::string DefaultExecutorProgram();

enum class CallFailure { kNone, kTimeout, kDied, kProtocol, kStopped };

struct CallResult {
  CallFailure failure = CallFailure::kNone;
  nlohmann::json reply;             // when failure == kNone
  std::vector<TensorView> tensors;  // valid until the next Call or Stop
  std::string detail;               // what went wrong, e.g. "signal SIGSEGV (11)"
  std::optional<ExitStatus> exit;   // kDied: how it ended
  std::string log_tail;             // the end of the executor's output, on failure

  // A reply came and it says "ok".
  bool succeeded() const { return failure == CallFailure::kNone && reply.value("ok", false); }
  // The reply read as one of executor_protocol's reply structs (defaults where it says nothing).
  template <typename Reply>
  Reply As() const {
    return reply.get<Reply>();
  }
};

// One executor as its parent sees it: a process that answers requests
// (executor_protocol) until it is stopped or dies. The operator loop, the
// A/B and the benchmark use this interface alone, so tests run them against
// a scripted fake (tests/support/fake_executor.h) instead of a process.
class ExecutorClient {
 public:
  virtual ~ExecutorClient() = default;
  // Sends `request` and waits up to timeout_s for the reply. A timeout or a
  // death leaves the executor stopped (alive() false); a protocol failure
  // (a reply that cannot be read) does not.
  virtual CallResult Call(const nlohmann::json& request, double timeout_s) = 0;
  // One of executor_protocol's request structs.
  template <typename Request, typename = decltype(Request::kOp)>
  CallResult Call(const Request& request, double timeout_s) {
    return Call(nlohmann::json(request), timeout_s);
  }
  // Ends the executor (it exits when its request pipe closes); idempotent.
  virtual void Stop() = 0;
  virtual bool alive() const = 0;
  virtual const std::string& log_path() const = 0;
  // The sandbox it runs in (bwrap, unshare, none); empty where that does not apply (a fake).
  virtual std::string sandbox_mode() const { return ""; }
  // Charges the warm-up the executor reports to `allowance` (null: none, the
  // warm-up counts as part of the call) until set again.
  virtual void LendWarmup(WarmupAllowance* allowance) { (void)allowance; }
  // Ends the executor at once (its process group killed), whatever it is
  // doing: for a spare that is no longer wanted. Stop() by default.
  virtual void Discard() { Stop(); }
  // held: stops (SIGSTOP) the executor and every process it left running, while another
  // executor is timed, so that nothing of this one's can slow the other's clock (an
  // implementation's processes while the framework is timed); not held: continues them.
  virtual void Hold(bool held) { (void)held; }
};

// Starts an executor: ProcessExecutor::Start, or a fake in tests.
using ExecutorFactory =
    std::function<Result<std::unique_ptr<ExecutorClient>>(const ExecutorOptions& options)>;

// The executor process (executor_main.cc) behind pipes and a memory file.
class ProcessExecutor final : public ExecutorClient {
 public:
  static Result<std::unique_ptr<ProcessExecutor>> Start(const ExecutorOptions& options);
  // Start as an ExecutorFactory.
  static Result<std::unique_ptr<ExecutorClient>> StartClient(const ExecutorOptions& options);
  ~ProcessExecutor() override;
  ProcessExecutor(const ProcessExecutor&) = delete;
  ProcessExecutor& operator=(const ProcessExecutor&) = delete;

  using ExecutorClient::Call;
  CallResult Call(const nlohmann::json& request, double timeout_s) override;
  // Closes the request pipe (the executor exits), then stops it if it lingers.
  void Stop() override;
  bool alive() const override { return alive_; }
  const std::string& log_path() const override { return options_.log_path; }
  std::string sandbox_mode() const override { return SandboxModeName(sandbox_); }
  void LendWarmup(WarmupAllowance* allowance) override { warmup_ = allowance; }
  void Discard() override;
  void Hold(bool held) override;

 private:
  ProcessExecutor(ExecutorOptions options, Subprocess process, int request_fd, int reply_fd,
                  int tensor_fd);
  Result<std::vector<TensorView>> MapTensors(const nlohmann::json& described);
  // A call's end when the executor died (`what` says how it was noticed) or
  // had to be stopped; either leaves it stopped.
  CallResult Died(const std::string& what);
  CallResult Stopped(CallFailure failure, const std::string& what, double grace_s);
  // A reply message read: its JSON and the tensors it describes, mapped.
  CallResult ReadReply(const std::string& message);
  std::string LogTail();
  // How the executor ended, from the status of the sandbox's launcher.
  ExitStatus Ended(const ExitStatus& launcher) const {
    return SandboxedExitStatus(sandbox_, launcher);
  }
  void Unmap();

  ExecutorOptions options_;
  Subprocess process_;
  int request_fd_;
  int reply_fd_;
  int tensor_fd_;
  void* mapping_ = nullptr;
  std::size_t mapped_bytes_ = 0;
  bool alive_ = true;
  SandboxMode sandbox_ = SandboxMode::kNone;
  std::string scratch_;             // removed once the executor has stopped
  std::unique_ptr<CappedLog> log_;  // its stdout and stderr, when log_path is set
  WarmupAllowance* warmup_ = nullptr;
  std::vector<pid_t> held_;  // what Hold(true) stopped
};

// Whether an executor started with `a` is one started with `b`: the same
// program, environment (HOME, cache folders, devices), log, sandbox, scratch
// parent and stop signal. A spare is handed only to a start it equals.
bool SameStart(const ExecutorOptions& a, const ExecutorOptions& b);

// What a rank keeps between operators (its worker):
// - one warm executor: the reference executor, which only ever imports task
//   files (docs/SECURITY.md, "The trust boundary"; an implementation's
//   executor is never pooled), or, with the golden shared
//   (OPVERIFY_SHARED_GOLDEN=1), the one executor of before. It goes back into
//   the pool only alive and healthy; before reuse, the executor checks that
//   no earlier operator changed torch itself (see opverify_runtime.executor:
//   "tainted"), else a fresh one is started;
// - up to kSpares spare implementation executors, started ahead for the
//   next operators while the current one runs (docs/PERFORMANCE.md, "The
//   spare executors"; two: the verification's and the benchmark's). A
//   spare has never been sent a request, so it is as fresh as one started
//   when needed. Each is handed out once, oldest first, to a start with the
//   same options alone; one started with other options is stopped, never reused.
class ExecutorPool {
 public:
  static constexpr std::size_t kSpares = 2;

  ExecutorPool() = default;
  ~ExecutorPool() { DiscardSpares(); }
  ExecutorPool(const ExecutorPool&) = delete;
  ExecutorPool& operator=(const ExecutorPool&) = delete;

  std::unique_ptr<ExecutorClient> Take() { return std::move(warm_); }
  void Return(std::unique_ptr<ExecutorClient> executor) {
    if (executor && executor->alive()) warm_ = std::move(executor);
  }

  // The oldest spare started with options SameStart as `options` (the pool
  // keeps it no longer); null when none. Spares of other options are stopped.
  std::unique_ptr<ExecutorClient> TakeSpare(const ExecutorOptions& options);
  // Keeps `spare`, just started with `options` and never asked anything, for
  // a later TakeSpare; the oldest is stopped when kSpares are kept already.
  void KeepSpare(const ExecutorOptions& options, std::unique_ptr<ExecutorClient> spare);
  // How many spares started with `options` are kept.
  std::size_t SparesFor(const ExecutorOptions& options) const;
  std::size_t spares() const { return spares_.size(); }
  // Stops every spare (the rank has no operator left for them).
  void DiscardSpares();

 private:
  struct Spare {
    ExecutorOptions options;
    std::unique_ptr<ExecutorClient> executor;
  };
  std::unique_ptr<ExecutorClient> warm_;
  std::deque<Spare> spares_;  // oldest first
};

}  // namespace opverify
