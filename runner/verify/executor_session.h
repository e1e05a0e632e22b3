// One operator loaded into its executor processes, across the trust
// boundary (docs/SECURITY.md): a reference executor that imports the task
// alone and makes each golden (taken warm from the rank's pool, handed back
// when healthy), and an implementation executor, new for this operator,
// that imports the implementation and never holds a golden. Shared by the
// verify loop (operator_run.cc) and the benchmark (runner/bench/operator_bench.cc).
// RunOptions::shared_golden (OPVERIFY_SHARED_GOLDEN=1) runs both in one
// pooled process as before the boundary (role "both"): for
// perf/trust_cost.py's measurement alone.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "runner/executor/executor_client.h"
#include "runner/verify/operator_run.h"

namespace opverify {

// The error type a call ended with: the reply's error_type, or Timeout,
// Crash (the executor died) or RuntimeError (a protocol failure).
std::string CallErrorType(const CallResult& call);
// The reply's error_msg, or what happened to the executor and the tail of its output.
std::string CallErrorMessage(const CallResult& call);

// How a call that did not succeed ended.
struct CallError {
  std::string type;     // CallErrorType
  std::string message;  // CallErrorMessage
};

class OperatorSession {
 public:
  OperatorSession(const OperatorSpec& spec, const RunOptions& options);
  ~OperatorSession();
  OperatorSession(const OperatorSession&) = delete;
  OperatorSession& operator=(const OperatorSession&) = delete;

  // Starts (or takes warm) what is not running and loads the operator in it:
  // the implementation's load reply (the reference's when that one failed),
  // or the call that failed.
  CallResult Open();
  // Both executors are running (Open() starts the one that is not).
  bool ready() const;
  // Before the next case: opens again what a failed case stopped. nullopt
  // when ready; else the failed restart ("restarting the executor: ..."),
  // which fails the operator's remaining cases.
  std::optional<CallError> Reopen();
  // The implementation executor's environment (device, versions, caches);
  // null when the call failed.
  nlohmann::json Environment();
  // The executor that runs the implementation's code (ModelNew, its timing, the environment).
  ExecutorClient* implementation() { return implementation_.get(); }
  // The one that never imports it: the lint, the goldens, the framework's timing,
  // describe_cases. The implementation's own when the golden is shared.
  ExecutorClient* reference() { return shared() ? implementation_.get() : reference_.get(); }
  // Case `request.index` across the boundary: the golden from the reference,
  // then the actual from the implementation's executor told the goldens'
  // sizes and the inputs the reference writes into. One reply (the
  // implementation's, with the reference's golden fields) whose tensors are
  // golden, actual per output, as a "both" executor ships them; a failure of
  // either side is that side's call.
  CallResult RunCase(const executor_protocol::RunCaseRequest& request, double timeout_s);
  // Something went wrong in the implementation: where the golden is shared,
  // its executor is not handed on (a reference executor never held it).
  void Spoil() {
    if (shared_) reusable_ = false;
  }
  // nullopt when `call` succeeded. Otherwise its error, and the session made
  // safe: the executor that failed (the implementation's, unless RunCase's
  // reference call failed) is stopped when it died or reported its device
  // poisoned (the next case needs a new one).
  std::optional<CallError> Failed(const CallResult& call);
  // How the implementation executor started, first one of the session:
  // {"spare": whether it was the rank's spare, "spare_wait_ms": how long
  // its readiness was waited for, "open_ms": the start and load as this
  // operator waited for them, "executor": its own split (interpreter_ms,
  // runtime_ms, torch_ms: the process's word, for diagnosis)}; {} before Open().
  const nlohmann::json& startup() const { return startup_; }
  // Each case's input_desc (an array per case), for the failures of an
  // operator that cannot run: asked of the reference executor, which has the
  // task loaded. An empty array when it is gone or cannot tell.
  nlohmann::json DescribeCases();
  // Case `index`'s entry of what DescribeCases() returned; [] when it has none.
  static nlohmann::json InputDescAt(const nlohmann::json& input_descs, int index);

 private:
  bool shared() const { return shared_; }
  // How an executor of this side is started: the key of the rank's spare.
  ExecutorOptions StartOptions(bool reference) const;
  Result<std::unique_ptr<ExecutorClient>> StartProcess(
      const ExecutorOptions& executor_options) const;
  // The rank's oldest spare that fits `executor_options` and answers a ping
  // in time; else null (a spare that died or hangs is stopped: nobody's failure).
  std::unique_ptr<ExecutorClient> TakeReadySpare(const ExecutorOptions& executor_options);
  // Fills the rank's spares up to ExecutorPool::kSpares that fit this operator's starts.
  void PrestartSpares();
  bool UsesSpares() const;
  Result<std::unique_ptr<ExecutorClient>> Start(bool reference);
  CallResult Load(ExecutorClient* executor, std::string_view role);
  // The reference's executor loaded with this operator (LoadReference), its load reply kept in
  // reference_load_.
  CallResult OpenReference();
  CallResult LoadReference();
  // A new executor into `slot` (a reference one: with a home of its own), loaded with `role`.
  CallResult StartAndLoad(std::unique_ptr<ExecutorClient>* slot, bool reference, std::string_view role);

  const OperatorSpec& spec_;
  const RunOptions& options_;
  const bool shared_;  // options.shared_golden
  std::unique_ptr<ExecutorClient> reference_;
  std::unique_ptr<ExecutorClient> implementation_;
  bool reusable_ = true;
  bool reference_failed_ = false;  // the last failed call was the reference's
  // Shared by every executor of this operator: a restart does not renew it.
  WarmupAllowance warmup_;
  nlohmann::json startup_ = nlohmann::json::object();
  // The reference's load reply: what the task says of its cases (case_count, edge_cases,
  // non_compute), counted where the implementation was never imported.
  nlohmann::json reference_load_ = nlohmann::json::object();
};

}  // namespace opverify
