// One operator loaded into an executor process: started (or taken warm from
// the rank's pool), loaded, and handed back to the pool when it is still
// healthy. Shared by the verify loop (operator_run.cc) and the benchmark
// (runner/bench/operator_bench.cc).
#pragma once

#include <memory>
#include <optional>
#include <string>

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
  OperatorSession(const OperatorSpec& spec, const RunOptions& options)
      : spec_(spec), options_(options), warmup_{spec.config.warmup_timeout_s, 0} {}
  ~OperatorSession();
  OperatorSession(const OperatorSession&) = delete;
  OperatorSession& operator=(const OperatorSession&) = delete;

  // Starts or takes an executor and loads the operator: the load reply, or the call that failed.
  CallResult Open();
  ExecutorClient* executor() { return executor_.get(); }
  // Something went wrong in this operator: do not hand its executor on.
  void Spoil() { reusable_ = false; }
  // nullopt when `call` succeeded. Otherwise its error, and the session made
  // safe: the executor is spoiled, and stopped when it died or reported its
  // device poisoned (the next case needs a new one).
  std::optional<CallError> Failed(const CallResult& call);
  // Each case's input_desc (an array per case), for the failures of an
  // operator that cannot run: asked of the executor, which keeps the task
  // loaded after an implementation failed to import or the lint refused it.
  // An empty array when the executor is gone or cannot tell.
  nlohmann::json DescribeCases();
  // Case `index`'s entry of what DescribeCases() returned; [] when it has none.
  static nlohmann::json InputDescAt(const nlohmann::json& input_descs, int index);

 private:
  CallResult Load();

  const OperatorSpec& spec_;
  const RunOptions& options_;
  std::unique_ptr<ExecutorClient> executor_;
  bool reusable_ = true;
  // Shared by every executor of this operator: a restart does not renew it.
  WarmupAllowance warmup_;
};

}  // namespace opverify
