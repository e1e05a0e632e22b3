#include "tests/support/fake_executor.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <stdexcept>

namespace opverify::testing {

using nlohmann::json;
namespace proto = executor_protocol;

struct FakeExecutorScript::State {
  std::map<std::string, FakeHandler, std::less<>> handlers;
  std::vector<Sent> requests;
  std::optional<std::string> start_failure;
  int started = 0;
  int stopped = 0;
};

FakeReply FakeReply::Ok(json fields, std::vector<OwnedTensor> tensors) {
  FakeReply r;
  r.reply = std::move(fields);
  r.reply["ok"] = true;
  r.tensors = std::move(tensors);
  return r;
}

FakeReply FakeReply::Error(const std::string& error_type, const std::string& message, bool device_poisoned,
                           json known) {
  FakeReply r;
  r.reply = std::move(known);
  proto::ReplyStatus status{false, error_type, message, device_poisoned};
  r.reply.update(json(status));
  return r;
}

FakeReply FakeReply::Timeout() {
  FakeReply r;
  r.failure = CallFailure::kTimeout;
  r.detail = "no reply in time; executor stopped";
  ExitStatus killed;
  killed.signal = 15;
  r.exit = killed;
  return r;
}

FakeReply FakeReply::Died(int signal) {
  FakeReply r;
  r.failure = CallFailure::kDied;
  ExitStatus died;
  died.signal = signal;
  r.exit = died;
  r.detail = "the executor died (" + died.Describe() + ")";
  return r;
}

FakeReply FakeReply::Protocol(const std::string& detail) {
  FakeReply r;
  r.failure = CallFailure::kProtocol;
  r.detail = detail;
  return r;
}

FakeExecutorScript::FakeExecutorScript() : state_(std::make_shared<State>()) {
  // Scripts answer as one executor making golden and actual (role "both"):
  // the session's shared mode, unless a test asks for the boundary.
  setenv("OPVERIFY_SHARED_GOLDEN", "1", 1);
}

void FakeExecutorScript::AcrossTheBoundary() { unsetenv("OPVERIFY_SHARED_GOLDEN"); }

void FakeExecutorScript::On(std::string_view op, FakeHandler handler) {
  if (std::find(proto::kRequestNames.begin(), proto::kRequestNames.end(), op) == proto::kRequestNames.end()) {
    throw std::invalid_argument("no request '" + std::string(op) + "' in the executor protocol");
  }
  state_->handlers[std::string(op)] = std::move(handler);
}

ExecutorFactory FakeExecutorScript::Factory() {
  std::shared_ptr<State> state = state_;
  return [state](const ExecutorOptions& options) -> Result<std::unique_ptr<ExecutorClient>> {
    if (state->start_failure) return Status::IoError(*state->start_failure);
    return std::unique_ptr<ExecutorClient>(std::make_unique<FakeExecutor>(state, ++state->started, options));
  };
}

void FakeExecutorScript::FailStarts(const std::string& why) { state_->start_failure = why; }

const std::vector<FakeExecutorScript::Sent>& FakeExecutorScript::requests() const { return state_->requests; }

std::vector<FakeExecutorScript::Sent> FakeExecutorScript::RequestsOf(std::string_view op) const {
  std::vector<Sent> of;
  for (const Sent& sent : state_->requests) {
    if (proto::RequestOp(sent.request) == op) of.push_back(sent);
  }
  return of;
}

int FakeExecutorScript::started() const { return state_->started; }
int FakeExecutorScript::stopped() const { return state_->stopped; }

FakeExecutor::FakeExecutor(std::shared_ptr<FakeExecutorScript::State> state, int id, ExecutorOptions options)
    : state_(std::move(state)), id_(id), options_(std::move(options)) {}

FakeExecutor::~FakeExecutor() { Stop(); }

void FakeExecutor::Stop() {
  if (alive_) ++state_->stopped;
  alive_ = false;
  shipped_.clear();
}

std::string FakeExecutor::Env(const std::string& name) const {
  for (const auto& [key, value] : options_.env) {
    if (key == name) return value;
  }
  return "";
}

CallResult FakeExecutor::Call(const json& request, double /*timeout_s*/) {
  CallResult result;
  shipped_.clear();
  if (!alive_) {
    result.failure = CallFailure::kDied;
    result.detail = "the executor had already stopped";
    return result;
  }
  state_->requests.push_back({id_, request});
  const std::string op = proto::RequestOp(request);
  FakeReply scripted;
  const auto handler = state_->handlers.find(op);
  if (std::find(proto::kRequestNames.begin(), proto::kRequestNames.end(), op) == proto::kRequestNames.end()) {
    scripted = FakeReply::Error("RuntimeError", "unknown request '" + op + "'");
  } else if (handler == state_->handlers.end()) {
    scripted = FakeReply::Error("RuntimeError", "the fake executor has no reply scripted for '" + op + "'");
  } else {
    scripted = handler->second(request, *this);
  }
  if (op == proto::LoadRequest::kOp) {
    ++loads_;
    role_ = request.value("role", "both");
  }
  result.failure = scripted.failure;
  result.detail = scripted.detail;
  result.exit = scripted.exit;
  if (scripted.failure == CallFailure::kTimeout || scripted.failure == CallFailure::kDied) {
    result.log_tail = scripted.log_tail.empty() ? "fake executor " + std::to_string(id_) + ": " + op
                                                : scripted.log_tail;
    Stop();
    return result;
  }
  result.reply = std::move(scripted.reply);
  shipped_ = std::move(scripted.tensors);
  for (const OwnedTensor& tensor : shipped_) result.tensors.push_back(tensor.view());
  return result;
}

std::vector<OwnedTensor> Outputs(const std::vector<double>& golden, const std::vector<double>& actual) {
  std::vector<OwnedTensor> tensors;
  tensors.emplace_back(DType::kFloat32, golden);
  tensors.emplace_back(DType::kFloat32, actual);
  return tensors;
}

}  // namespace opverify::testing
