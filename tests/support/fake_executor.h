// A scripted executor for tests of the operator loop, the A/B, the benchmark
// and the worker: LevelDB's fault-injection Env in our terms. Each request
// op gets a handler that answers it (a reply with tensors, an error reply, a
// timeout, a death by a signal, a reply that cannot be read), and every
// request is logged, so a test states what the executor did and checks what
// the runner made of it, with no process and no Python.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/executor/executor_client.h"
#include "tests/support/tensor_builder.h"

namespace opverify::testing {

// One scripted answer.
struct FakeReply {
  CallFailure failure = CallFailure::kNone;
  nlohmann::json reply;              // kNone: the reply message
  std::vector<OwnedTensor> tensors;  // kNone: shipped with it (golden, actual per output for run_case)
  std::string detail;
  std::optional<ExitStatus> exit;
  std::string log_tail;  // kTimeout, kDied: the executor's last output (default: names the fake and op)

  // {"ok": true, fields...}.
  static FakeReply Ok(nlohmann::json fields = nlohmann::json::object(), std::vector<OwnedTensor> tensors = {});
  // {"ok": false, "error_type", "error_msg", "device_poisoned", known...}.
  static FakeReply Error(const std::string& error_type, const std::string& message, bool device_poisoned = false,
                         nlohmann::json known = nlohmann::json::object());
  // No reply in time: the executor is stopped.
  static FakeReply Timeout();
  // The executor died of `signal` (SIGSEGV, SIGKILL, ...).
  static FakeReply Died(int signal);
  // A reply that cannot be read; the executor lives on.
  static FakeReply Protocol(const std::string& detail);
};

class FakeExecutor;

// Answers one request; `executor` says which executor is asked (its id, its
// options, how many loads it answered before).
using FakeHandler = std::function<FakeReply(const nlohmann::json& request, const FakeExecutor& executor)>;

// The script every executor its Factory() starts follows, and the log of
// what they were asked. Executors may outlive the script (a pool keeps one).
class FakeExecutorScript {
 public:
  FakeExecutorScript();

  // Answers requests whose op is `op` (one of executor_protocol::kRequestNames).
  // An op without a handler gets an error reply naming it.
  void On(std::string_view op, FakeHandler handler);
  // The factory for RunOptions::start_executor.
  ExecutorFactory Factory();
  // By default (the constructor) RunOptions made afterwards share the golden
  // (OPVERIFY_SHARED_GOLDEN=1: one executor answers as role "both"); after
  // this, they run across the trust boundary: a reference and an
  // implementation executor, whose roles FakeExecutor::role() tells.
  void AcrossTheBoundary();
  // Makes the factory fail, as when the program cannot be started.
  void FailStarts(const std::string& why);

  struct Sent {
    int executor = 0;  // FakeExecutor::id()
    nlohmann::json request;
  };
  const std::vector<Sent>& requests() const;
  // The requests of one op, in order.
  std::vector<Sent> RequestsOf(std::string_view op) const;
  int started() const;  // executors started so far
  int stopped() const;  // executors stopped (Stop, a timeout or a death)

  struct State;

 private:
  std::shared_ptr<State> state_;
};

class FakeExecutor final : public ExecutorClient {
 public:
  FakeExecutor(std::shared_ptr<FakeExecutorScript::State> state, int id, ExecutorOptions options);
  ~FakeExecutor() override;

  using ExecutorClient::Call;
  CallResult Call(const nlohmann::json& request, double timeout_s) override;
  void Stop() override;
  bool alive() const override { return alive_; }
  const std::string& log_path() const override { return options_.log_path; }

  int id() const { return id_; }  // 1 for the first started
  const ExecutorOptions& options() const { return options_; }
  // The value of `name` in this executor's environment; empty when not set.
  std::string Env(const std::string& name) const;
  int loads() const { return loads_; }  // load requests answered before the current one
  const std::string& role() const { return role_; }  // its last load's role ("both" before one)

 private:
  std::shared_ptr<FakeExecutorScript::State> state_;
  int id_;
  ExecutorOptions options_;
  bool alive_ = true;
  int loads_ = 0;
  std::string role_ = "both";
  std::vector<OwnedTensor> shipped_;  // the last reply's tensors: valid until the next call
};

// Float32 tensors of `values`: golden and actual of one output.
std::vector<OwnedTensor> Outputs(const std::vector<double>& golden, const std::vector<double>& actual);

}  // namespace opverify::testing
