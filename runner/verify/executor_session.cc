#include "runner/verify/executor_session.h"

#include <spdlog/spdlog.h>

#include "runner/common/utf8.h"

namespace opverify {

using nlohmann::json;
namespace proto = executor_protocol;

// The error types a case can end with when it does not run to the end.
std::string CallErrorType(const CallResult& call) {
  switch (call.failure) {
    case CallFailure::kTimeout:
      return "Timeout";
    case CallFailure::kDied:
      return "Crash";
    case CallFailure::kProtocol:
      return "RuntimeError";
    case CallFailure::kStopped:
      return std::string(kStoppedErrorType);
    case CallFailure::kNone:
      break;
  }
  return call.reply.value("error_type", "RuntimeError");
}

std::string CallErrorMessage(const CallResult& call) {
  if (call.failure == CallFailure::kNone) return call.reply.value("error_msg", "");
  std::string message = call.detail;
  if (!call.log_tail.empty()) message += "\n--- executor output (tail) ---\n" + call.log_tail;
  return message;
}

OperatorSession::~OperatorSession() {
  if (executor_) executor_->LendWarmup(nullptr);
  // A warm, healthy executor serves the rank's next operator.
  if (options_.pool != nullptr && executor_ && executor_->alive() && reusable_)
    options_.pool->Return(std::move(executor_));
}

CallResult OperatorSession::Open() {
  executor_.reset();
  if (options_.pool != nullptr) {
    executor_ = options_.pool->Take();
    if (executor_) {
      executor_->LendWarmup(&warmup_);
      CallResult loaded = Load();
      // An earlier operator changed torch itself in that process: start afresh.
      if (loaded.failure != CallFailure::kNone) return loaded;
      const auto status = loaded.As<proto::ReplyStatus>();
      if (status.ok || status.error_type != proto::kExecutorTainted) return loaded;
      spdlog::warn(
          "{}: the warm executor was tainted by an earlier operator ({}); starting a new one",
          spec_.name, Utf8Prefix(status.error_msg, 300));
      executor_->Stop();
    }
  }
  ExecutorOptions executor_options;
  executor_options.program = options_.executor_program;
  executor_options.env = options_.env;
  executor_options.log_path = options_.log_path;
  executor_options.sandbox = options_.sandbox;
  executor_options.scratch_parent = options_.scratch_parent;
  executor_options.stop = options_.stop;
  Result<std::unique_ptr<ExecutorClient>> started =
      options_.start_executor ? options_.start_executor(executor_options)
                              : ProcessExecutor::StartClient(executor_options);
  if (!started.ok()) {
    CallResult failed;
    failed.failure = CallFailure::kProtocol;
    failed.detail = started.status().ToString();
    return failed;
  }
  executor_ = std::move(started).value();
  executor_->LendWarmup(&warmup_);
  return Load();
}

std::optional<CallError> OperatorSession::Failed(const CallResult& call) {
  if (call.succeeded()) return std::nullopt;
  Spoil();
  if ((call.failure != CallFailure::kNone || call.reply.value("device_poisoned", false)) &&
      executor_) {
    executor_->Stop();
  }
  return CallError{CallErrorType(call), CallErrorMessage(call)};
}

json OperatorSession::DescribeCases() {
  if (executor_ == nullptr || !executor_->alive()) return json::array();
  CallResult described = executor_->Call(proto::DescribeCasesRequest{}, spec_.config.timeout_s);
  if (!described.succeeded()) return json::array();
  return described.As<proto::DescribeCasesReply>().input_descs;
}

json OperatorSession::InputDescAt(const json& input_descs, int index) {
  const auto at = static_cast<std::size_t>(index);
  return index >= 0 && at < input_descs.size() && input_descs[at].is_array() ? input_descs[at]
                                                                             : json::array();
}

CallResult OperatorSession::Load() {
  proto::LoadRequest load;
  load.task_file = spec_.task_file;
  load.impl_file = spec_.impl_file;
  load.backend = options_.backend;
  load.seed = spec_.config.seed;
  load.golden_precision = spec_.config.golden_precision;
  load.params = spec_.params;
  load.edge_cases = spec_.config.edge_cases;
  load.runtime_checks = spec_.config.runtime_checks;  // its own switch: the lint may be off
  load.ghost_replay = spec_.config.ghost_replay;
  load.library = spec_.config.library;
  load.python_path = spec_.config.python_path;
  load.override_spec = spec_.override_spec;
  load.reference_as_impl = spec_.reference_as_impl;
  load.allow_torch = AllowancesToJson(spec_.config.allow_torch);
  return executor_->Call(load, spec_.config.timeout_s);
}

}  // namespace opverify
