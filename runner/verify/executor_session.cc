#include "runner/verify/executor_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "runner/common/failure_type.h"
#include "runner/common/utf8.h"

namespace opverify {

using nlohmann::json;
namespace proto = executor_protocol;

// The error types a case can end with when it does not run to the end.
std::string CallErrorType(const CallResult& call) {
  switch (call.failure) {
    case CallFailure::kTimeout:
      return std::string(FailureKindName(FailureKind::kTimeout));
    case CallFailure::kDied:
      return std::string(FailureKindName(FailureKind::kCrash));
    case CallFailure::kProtocol:
      return std::string(FailureKindName(FailureKind::kRuntimeError));
    case CallFailure::kStopped:
      return std::string(kStoppedErrorType);
    case CallFailure::kNone:
      break;
  }
  return call.reply.value("error_type", std::string(FailureKindName(FailureKind::kRuntimeError)));
}

std::string CallErrorMessage(const CallResult& call) {
  if (call.failure == CallFailure::kNone) return call.reply.value("error_msg", "");
  std::string message = call.detail;
  if (!call.log_tail.empty()) message += "\n--- executor output (tail) ---\n" + call.log_tail;
  return message;
}

namespace {

// A reply of our own for a case the two executors do not agree on.
CallResult Refused(std::string_view type, const std::string& message) {
  CallResult refused;
  refused.reply = {{"ok", false},
                   {"error_type", std::string(type)},
                   {"error_msg", message},
                   {"device_poisoned", false}};
  return refused;
}

// The implementation's reply with the reference's golden fields, and the
// tensors golden, actual per output; or why the two cannot be judged together.
CallResult Joined(const CallResult& golden, CallResult actual) {
  const json& made = golden.reply;
  // Whether a case applies is the reference's to say (RunCase returned early where it does not);
  // the implementation's reply saying so would pass a case nobody judged.
  if (actual.reply.contains("not_applicable")) {
    return Refused(proto::kRuntimeTampered,
                   "the implementation's executor called this case not applicable (" +
                       Utf8Prefix(actual.reply.value("not_applicable", json()).dump(), 300) +
                       "), which only the reference's may (the task's inputs or its Model cannot be "
                       "built for it), and the reference's built it: its reply is not believed");
  }
  const std::string reference_digest = made.value("input_digest", "");
  const std::string digest = actual.reply.value("input_digest", "");
  if (reference_digest != digest) {
    return Refused(proto::kInputMismatch,
                   "the implementation's executor built other inputs for this case than the "
                   "reference's (input digest " + digest + ", the reference's " + reference_digest +
                       "): get_inputs must give the same inputs for a seed in every process, "
                       "and an implementation must not change them");
  }
  // Every input the reference does not write keeps its bytes through ModelNew.forward: the
  // reference's digest of them as built against the implementation's after its forward (the
  // runtime's own comparison runs in the implementation's process, whose copies it can rewrite).
  const std::string kept = made.value("kept_inputs_digest", "");
  if (!kept.empty() && actual.reply.value("kept_inputs_digest", "") != kept) {
    return Refused(std::string(FailureKindName(FailureKind::kInputMutated)),
                   "ModelNew.forward changed its inputs (an implementation must not write into them: "
                   "the caller's data would be wrong after it): after it their bytes differ from the "
                   "reference's copy (digest " + actual.reply.value("kept_inputs_digest", "none") +
                       ", the reference's " + kept + ")");
  }
  if (golden.tensors.size() != actual.tensors.size()) {
    return Refused(std::string(FailureKindName(FailureKind::kShapeMismatch)),
                   "Model returned " + std::to_string(golden.tensors.size()) +
                       " outputs, ModelNew " + std::to_string(actual.tensors.size()));
  }
  json& reply = actual.reply;
  for (const char* key : {"golden_device", "golden_precision", "fallback_reason"}) {
    if (made.contains(key)) reply[key] = made[key];
  }
  json warnings = made.value("warnings", json::array());
  for (const json& w : reply.value("warnings", json::array())) warnings.push_back(w);
  reply["warnings"] = warnings;
  if (!reply.contains("timings") || !reply["timings"].is_object()) reply["timings"] = json::object();
  const json golden_timings = made.value("timings", json::object());
  if (golden_timings.is_object() && golden_timings.contains("golden_ms"))
    reply["timings"]["golden_ms"] = golden_timings["golden_ms"];
  std::vector<TensorView> tensors;
  for (std::size_t i = 0; i < golden.tensors.size(); ++i) {
    tensors.push_back(golden.tensors[i]);
    tensors.push_back(actual.tensors[i]);
  }
  actual.tensors = std::move(tensors);
  return actual;
}

}  // namespace

OperatorSession::OperatorSession(const OperatorSpec& spec, const RunOptions& options)
    : spec_(spec), options_(options), shared_(options.shared_golden), warmup_{spec.config.warmup_timeout_s, 0} {}

OperatorSession::~OperatorSession() {
  for (auto* executor : {reference_.get(), implementation_.get()}) {
    if (executor) executor->LendWarmup(nullptr);
  }
  if (options_.pool == nullptr) return;
  // A warm, healthy reference executor serves the rank's next operator; an
  // implementation's executor never does (but the golden shared, as before).
  std::unique_ptr<ExecutorClient>& kept = shared() ? implementation_ : reference_;
  if (kept && kept->alive() && reusable_) options_.pool->Return(std::move(kept));
  if (options_.prestart == SparePrestart::kOnClose) {
    implementation_.reset();  // its process is gone before the spare's starts
    PrestartSpares();
  }
}

bool OperatorSession::ready() const {
  return implementation_ && implementation_->alive() && (shared() || (reference_ && reference_->alive()));
}

ExecutorOptions OperatorSession::StartOptions(bool reference) const {
  ExecutorOptions executor_options = options_.executor;
  // A spare imports the library as it starts (executor.py, Session.preload):
  // the variable is part of its start options, so a spare preloaded for one
  // library is never handed to an operator of another (ExecutorPool::TakeSpare).
  const std::vector<std::string> preload = spec_.config.PreloadModules();
  if (!reference && UsesSpares() && options_.preload && !preload.empty()) {
    executor_options.env.emplace_back(
        "OPVERIFY_PRELOAD", json{{"library", spec_.config.library},
                                 {"modules", preload},
                                 {"python_path", spec_.config.python_path}}
                                .dump());
  }
  if (reference) {
    // A home of its own in its scratch folder: nothing an implementation
    // wrote in the rank's home is read by the process that makes the goldens.
    auto& env = executor_options.env;
    env.erase(std::remove_if(env.begin(), env.end(), [](const auto& entry) { return entry.first == "HOME"; }),
              env.end());
  }
  return executor_options;
}

Result<std::unique_ptr<ExecutorClient>> OperatorSession::StartProcess(
    const ExecutorOptions& executor_options) const {
  return options_.start_executor ? options_.start_executor(executor_options)
                                 : ProcessExecutor::StartClient(executor_options);
}

// Spares serve implementation executors across the boundary alone: a
// reference executor is pooled warm instead, and the shared path pools its one.
bool OperatorSession::UsesSpares() const { return options_.pool != nullptr && !shared(); }

std::unique_ptr<ExecutorClient> OperatorSession::TakeReadySpare(
    const ExecutorOptions& executor_options) {
  if (!UsesSpares()) return nullptr;
  while (std::unique_ptr<ExecutorClient> spare = options_.pool->TakeSpare(executor_options)) {
    const auto asked = std::chrono::steady_clock::now();
    const CallResult ready = spare->Call(proto::PingRequest{}, spec_.config.timeout_s);
    const double waited_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - asked).count();
    if (ready.succeeded()) {
      if (startup_.empty()) startup_ = {{"spare", true}, {"spare_wait_ms", waited_ms}};
      return spare;
    }
    spdlog::warn("{}: a spare executor did not come up ({}); taking the next or a new one",
                 spec_.name, Utf8Prefix(CallErrorMessage(ready), 300));
    spare->Discard();
  }
  return nullptr;
}

void OperatorSession::PrestartSpares() {
  if (!UsesSpares() || options_.prestart == SparePrestart::kNever) return;
  if (options_.executor.stop != nullptr && options_.executor.stop->load() != 0) return;
  const ExecutorOptions executor_options = StartOptions(false);
  while (options_.pool->SparesFor(executor_options) < ExecutorPool::kSpares) {
    Result<std::unique_ptr<ExecutorClient>> started = StartProcess(executor_options);
    // A spare that cannot start is nobody's failure: the next operator starts
    // its own, whose failure is then reported.
    if (!started.ok()) {
      spdlog::debug("{}: no spare executor: {}", spec_.name, started.status().ToString());
      return;
    }
    options_.pool->KeepSpare(executor_options, std::move(started).value());
  }
}

Result<std::unique_ptr<ExecutorClient>> OperatorSession::Start(bool reference) {
  const ExecutorOptions executor_options = StartOptions(reference);
  std::unique_ptr<ExecutorClient> executor = reference ? nullptr : TakeReadySpare(executor_options);
  if (!executor) {
    Result<std::unique_ptr<ExecutorClient>> started = StartProcess(executor_options);
    if (!started.ok()) return started;
    executor = std::move(started).value();
  }
  executor->LendWarmup(&warmup_);
  // The next operator's starts now, beside this one's load and cases.
  if (!reference && options_.prestart == SparePrestart::kOnOpen) PrestartSpares();
  return executor;
}

CallResult OperatorSession::OpenReference() {
  CallResult loaded = LoadReference();
  if (loaded.succeeded() && !shared()) reference_load_ = loaded.reply;
  return loaded;
}

CallResult OperatorSession::LoadReference() {
  reference_.reset();
  // The golden shared: one process, pooled as before the boundary.
  const std::string_view role = shared() ? proto::kRoleBoth : proto::kRoleReference;
  std::unique_ptr<ExecutorClient>& slot = shared() ? implementation_ : reference_;
  if (options_.pool != nullptr) {
    slot = options_.pool->Take();
    if (slot) {
      slot->LendWarmup(&warmup_);
      CallResult loaded = Load(slot.get(), role);
      // An earlier task changed torch itself in that process: start afresh.
      if (loaded.failure != CallFailure::kNone) return loaded;
      const auto status = loaded.As<proto::ReplyStatus>();
      if (status.ok || status.error_type != proto::kExecutorTainted) return loaded;
      spdlog::warn("{}: the warm executor was tainted by an earlier operator ({}); starting a new one",
                   spec_.name, Utf8Prefix(status.error_msg, 300));
      slot->Stop();
    }
  }
  return StartAndLoad(&slot, !shared(), role);
}

namespace {

// bwrap builds the sandbox from a list of the host's unix sockets taken as
// the executor starts (each covered by /dev/null); one removed in between (a
// daemon or a test that went away) fails bwrap's set-up before the executor
// runs: "bwrap: Can't mkdir parents for /tmp/x/daemon.sock: Read-only file
// system". That is the host's moment, not the operator's failure: the start
// is tried again, with a list taken afresh.
constexpr int kSandboxSetUpAttempts = 3;

bool SandboxSetUpFailed(const CallResult& loaded) {
  return loaded.failure == CallFailure::kDied && loaded.log_tail.rfind("bwrap: ", 0) == 0;
}

}  // namespace

CallResult OperatorSession::StartAndLoad(std::unique_ptr<ExecutorClient>* slot, bool reference,
                                         std::string_view role) {
  const auto asked = std::chrono::steady_clock::now();
  CallResult loaded;
  for (int attempt = 1; attempt <= kSandboxSetUpAttempts; ++attempt) {
    Result<std::unique_ptr<ExecutorClient>> started = Start(reference);
    if (!started.ok()) {
      CallResult failed;
      failed.failure = CallFailure::kProtocol;
      failed.detail = started.status().ToString();
      return failed;
    }
    *slot = std::move(started).value();
    loaded = Load(slot->get(), role);
    if (!SandboxSetUpFailed(loaded) || attempt == kSandboxSetUpAttempts) break;
    spdlog::warn("{}: the executor's sandbox could not be set up ({}); starting it again", spec_.name,
                 Utf8Prefix(loaded.log_tail, 300));
  }
  if (!reference && !startup_.contains("open_ms")) {
    if (!startup_.contains("spare")) startup_["spare"] = false;
    startup_["open_ms"] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - asked).count();
    const json& own = loaded.reply.is_object() ? loaded.reply.value("startup", json()) : json();
    if (own.is_object()) startup_["executor"] = own;
  }
  return loaded;
}

CallResult OperatorSession::Open() {
  CallResult loaded;
  loaded.reply = {{"ok", true}};  // both were running
  if (shared()) return implementation_ && implementation_->alive() ? loaded : OpenReference();
  if (!reference_ || !reference_->alive()) {
    loaded = OpenReference();
    if (!loaded.succeeded()) {
      reusable_ = false;
      return loaded;
    }
  }
  if (implementation_ && implementation_->alive()) return loaded;
  implementation_.reset();
  CallResult implementation = StartAndLoad(&implementation_, false, proto::kRoleImplementation);
  // What the task says of its cases comes from the reference's load, which never imported the
  // implementation: an implementation whose load died, or whose reply is not believed
  // (RuntimeTampered), fails every case, not the first; one whose own count differs changed its
  // runtime (a load that hides cases it gets wrong): not believed either.
  constexpr const char* kCaseFacts[] = {"case_count", "edge_cases", "non_compute"};
  if (implementation.succeeded()) {
    for (const char* key : kCaseFacts) {
      if (implementation.reply.value(key, json()) == reference_load_.value(key, json())) continue;
      implementation = Refused(proto::kRuntimeTampered,
                               std::string("the implementation's executor told another ") + key + " (" +
                                   Utf8Prefix(implementation.reply.value(key, json()).dump(), 200) +
                                   ") than the reference's (" +
                                   Utf8Prefix(reference_load_.value(key, json()).dump(), 200) +
                                   "), counted from the same task: its load reply is not believed");
      break;
    }
  }
  if (!implementation.reply.is_object()) implementation.reply = json::object();
  for (const char* key : kCaseFacts) {
    if (reference_load_.contains(key)) implementation.reply[key] = reference_load_[key];
  }
  return implementation;
}

CallResult OperatorSession::RunCase(const proto::RunCaseRequest& request, double timeout_s) {
  reference_failed_ = false;
  if (shared()) return implementation_->Call(request, timeout_s);
  proto::RunCaseRequest golden_request = request;
  golden_request.probe = golden_request.check_determinism = golden_request.evidence = false;
  CallResult golden = reference_->Call(golden_request, timeout_s);
  if (!golden.succeeded()) {
    reference_failed_ = true;
    return golden;
  }
  const auto made = golden.As<proto::RunCaseReply>();
  if (made.not_applicable) return golden;  // a generated case the task cannot build
  proto::RunCaseRequest actual_request = request;
  actual_request.golden_sizes = made.golden_sizes;
  actual_request.reference_writes = made.writes_inputs;
  CallResult actual = implementation_->Call(actual_request, timeout_s);
  if (!actual.succeeded()) return actual;
  return Joined(golden, std::move(actual));
}

std::optional<CallError> OperatorSession::Failed(const CallResult& call) {
  if (call.succeeded()) return std::nullopt;
  ExecutorClient* failed = reference_failed_ ? reference() : implementation_.get();
  if (shared() || reference_failed_) reusable_ = false;
  if ((call.failure != CallFailure::kNone || call.reply.value("device_poisoned", false)) && failed) {
    failed->Stop();
  }
  return CallError{CallErrorType(call), CallErrorMessage(call)};
}

json OperatorSession::DescribeCases() {
  ExecutorClient* executor = reference();
  if (executor == nullptr || !executor->alive()) return json::array();
  CallResult described = executor->Call(proto::DescribeCasesRequest{}, spec_.config.timeout_s);
  if (!described.succeeded()) return json::array();
  return described.As<proto::DescribeCasesReply>().input_descs;
}

std::optional<CallError> OperatorSession::Reopen() {
  if (ready()) return std::nullopt;
  CallResult reopened = Open();
  if (reopened.succeeded()) return std::nullopt;
  return CallError{CallErrorType(reopened),
                   "restarting the executor: " + CallErrorMessage(reopened)};
}

json OperatorSession::Environment() {
  CallResult environment =
      implementation()->Call(proto::EnvironmentRequest{}, spec_.config.timeout_s);
  return environment.succeeded() ? environment.As<proto::EnvironmentReply>().environment : json();
}

json OperatorSession::InputDescAt(const json& input_descs, int index) {
  const auto at = static_cast<std::size_t>(index);
  return index >= 0 && at < input_descs.size() && input_descs[at].is_array() ? input_descs[at]
                                                                             : json::array();
}

CallResult OperatorSession::Load(ExecutorClient* executor, std::string_view role) {
  proto::LoadRequest load;
  load.task_file = spec_.code.task_file;
  load.impl_file = spec_.code.impl_file;
  load.backend = options_.backend;
  load.seed = spec_.config.seed;
  load.golden_precision = spec_.config.golden_precision;
  load.params = spec_.params;
  load.edge_cases = spec_.config.edge_cases;
  load.runtime_checks = spec_.config.runtime_checks;  // its own switch: the lint may be off
  load.ghost_replay = spec_.config.ghost_replay;
  load.library = spec_.config.library;
  load.python_path = spec_.config.python_path;
  load.override_spec = spec_.code.override_spec;
  load.reference_as_impl = spec_.reference_as_impl;
  load.allow_torch = AllowancesToJson(spec_.config.allow_torch);
  load.role = std::string(role);
  return executor->Call(load, spec_.config.timeout_s);
}

}  // namespace opverify
