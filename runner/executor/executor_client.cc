#include "runner/executor/executor_client.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "runner/common/json_text.h"
#include "runner/common/strings.h"
#include "runner/executor/protocol.h"
#include "runner/process/channel.h"

namespace fs = std::filesystem;
namespace proto = opverify::executor_protocol;

namespace opverify {

ProcessExecutor::ProcessExecutor(ExecutorOptions options, Subprocess process, int request_fd,
                                 int reply_fd, int tensor_fd)
    : options_(std::move(options)),
      process_(std::move(process)),
      request_fd_(request_fd),
      reply_fd_(reply_fd),
      tensor_fd_(tensor_fd) {}

ProcessExecutor::~ProcessExecutor() {
  Stop();
  CloseFd(&tensor_fd_);
}

void ProcessExecutor::Unmap() {
  if (mapping_ != nullptr) munmap(mapping_, mapped_bytes_);
  mapping_ = nullptr;
  mapped_bytes_ = 0;
}

void ProcessExecutor::Stop() {
  Hold(false);  // a stopped executor would not see its request pipe close
  Unmap();
  CloseFd(&request_fd_);
  CloseFd(&reply_fd_);
  if (process_.running() && !process_.Wait(2.0)) process_.Terminate(2.0);
  alive_ = false;
  if (log_) log_->Finish(1.0);  // the namespace is gone: so is every writer of the log
  if (!scratch_.empty()) {
    std::error_code ec;
    fs::remove_all(scratch_, ec);
    scratch_.clear();
  }
}

void ProcessExecutor::Discard() {
  Hold(false);
  if (process_.running()) process_.Terminate(0.5);
  Stop();
}

void ProcessExecutor::Hold(bool held) {
  if (!held) {
    for (const pid_t pid : held_) kill(pid, SIGCONT);
    held_.clear();
    return;
  }
  if (!process_.running()) return;
  // Until a pass finds nothing new: a process stopped cannot fork, one forked meanwhile is found
  // by the next pass.
  for (int pass = 0; pass < 8; ++pass) {
    std::vector<pid_t> tree = Descendants(process_.pid());
    tree.push_back(process_.pid());
    bool found = false;
    for (const pid_t pid : tree) {
      if (std::find(held_.begin(), held_.end(), pid) != held_.end()) continue;
      if (kill(pid, SIGSTOP) == 0) held_.push_back(pid);
      found = true;
    }
    if (!found) break;
  }
}

std::string ProcessExecutor::LogTail() {
  if (!log_) return "";
  if (!process_.running()) log_->Finish(1.0);  // all of a dead executor's output
  return log_->Tail();
}

Result<std::vector<TensorView>> ProcessExecutor::MapTensors(const nlohmann::json& described) {
  Unmap();
  const auto tensors = described.get<std::vector<proto::TensorDescription>>();
  std::vector<TensorView> views;
  std::size_t needed = 0;
  for (const auto& t : tensors) {
    needed =
        std::max(needed, static_cast<std::size_t>(t.offset) + static_cast<std::size_t>(t.nbytes));
  }
  static const std::byte kNothing{};
  const std::byte* base = &kNothing;  // only empty tensors: nothing to map
  if (needed > 0) {
    // The file cannot shrink (sealed), so what fstat finds now stays mapped.
    struct stat file {};
    if (fstat(tensor_fd_, &file) != 0 || static_cast<std::size_t>(file.st_size) < needed)
      return Status::IoError(Printf(
          "the executor described %zu bytes of tensors; its tensor file holds %lld", needed,
          static_cast<long long>(file.st_size)));
    void* mapping = mmap(nullptr, needed, PROT_READ, MAP_SHARED, tensor_fd_, 0);
    if (mapping == MAP_FAILED)
      return Status::IoError(std::string("mapping the executor's tensors: ") +
                             std::strerror(errno));
    mapping_ = mapping;
    mapped_bytes_ = needed;
    base = static_cast<const std::byte*>(mapping_);
  }
  for (const auto& t : tensors) {
    const std::optional<DType> dtype = ParseDType(t.dtype);
    if (!dtype)
      return Status::Unsupported("the executor returned a tensor of dtype '" + t.dtype +
                                 "', which the judge does not know");
    const std::size_t offset = needed > 0 ? static_cast<std::size_t>(t.offset) : 0;
    views.push_back(TensorView::Contiguous(*dtype, t.shape, base + offset));
  }
  return views;
}

namespace {

// Where a call's time goes while it waits for the reply: to the call's own
// timeout, or, while the executor says it is warming up, to the operator's
// warm-up allowance first (never beyond it).
class CallClock {
 public:
  using Clock = std::chrono::steady_clock;
  CallClock(double timeout_s, WarmupAllowance* warmup) : timeout_s_(timeout_s), warmup_(warmup) {}

  void Charge() {
    const Clock::time_point now = Clock::now();
    double spent = std::chrono::duration<double>(now - since_).count();
    since_ = now;
    if (warming_ && warmup_ != nullptr && warmup_->left_s > 0) {
      const double taken = std::min(spent, warmup_->left_s);
      warmup_->left_s -= taken;
      warmup_->spent_s += taken;
      spent -= taken;
    }
    call_s_ += spent;
  }
  void SetWarming(bool warming) {
    Charge();
    warming_ = warming;
  }
  // How long the call may still wait at most.
  double LeftS() const {
    const double own = std::max(0.0, timeout_s_ - call_s_);
    return warming_ && warmup_ != nullptr ? own + warmup_->left_s : own;
  }
  bool Expired() const { return call_s_ >= timeout_s_; }
  std::string WhyExpired() const {
    std::string why = "no reply within " + std::to_string(timeout_s_) + " s";
    if (warmup_ != nullptr && warmup_->spent_s > 0) {
      why += Printf(" (besides %.1f s of warm-up: compilation, autotuning%s)", warmup_->spent_s,
                    warmup_->left_s <= 0 ? ", the operator's whole warm-up allowance" : "");
    }
    return why;
  }

 private:
  double timeout_s_;
  WarmupAllowance* warmup_;
  Clock::time_point since_ = Clock::now();
  double call_s_ = 0;
  bool warming_ = false;
};

// The warm-up state an event announces, or nullopt for a message that is no event.
std::optional<bool> WarmupEvent(const nlohmann::json& message) {
  if (!message.is_object() || !message.contains(proto::kEventKey)) return std::nullopt;
  if (message.value(std::string(proto::kEventKey), "") != proto::kWarmupEvent) return std::nullopt;
  return message.value("state", "") == "start";
}

// How a wait for the reply ended.
enum class WaitEnd {
  kMessage,  // a message other than a warm-up event, or a failure to read one: in `reply`
  kStopped,  // the run's stop signal came
  kTimeout,  // no message began within the call's time
};

// Waits for the reply in slices, so that a stop signal ends the wait within
// one slice and warm-up events move the deadline.
WaitEnd AwaitReply(int reply_fd, const std::atomic<int>* stop, CallClock* clock, Received* reply) {
  constexpr double kSliceS = 0.1;
  for (;;) {
    if (stop != nullptr && stop->load() != 0) return WaitEnd::kStopped;
    const bool readable = WaitReadable(reply_fd, std::min(kSliceS, clock->LeftS()));
    clock->Charge();
    if (!readable) {
      if (clock->LeftS() <= 0 || clock->Expired()) return WaitEnd::kTimeout;
      continue;
    }
    // The rest of a message that has begun comes at once; a slow one is a timeout like any.
    *reply = ReceiveMessage(reply_fd, std::max(clock->LeftS(), kSliceS));
    if (!reply->ok) return WaitEnd::kMessage;
    const nlohmann::json event = nlohmann::json::parse(reply->message, nullptr, false);
    const std::optional<bool> warming = WarmupEvent(event);
    if (!warming) return WaitEnd::kMessage;
    clock->SetWarming(*warming);
  }
}

}  // namespace

CallResult ProcessExecutor::Died(const std::string& what) {
  CallResult result;
  result.failure = CallFailure::kDied;
  std::optional<ExitStatus> status = process_.Wait(5.0);
  status = Ended(status ? *status : process_.Terminate(1.0));
  result.exit = status;
  result.detail = what + " (" + status->Describe() + ")";
  result.log_tail = LogTail();
  alive_ = false;
  return result;
}

CallResult ProcessExecutor::Stopped(CallFailure failure, const std::string& what, double grace_s) {
  CallResult result;
  result.failure = failure;
  result.exit = Ended(process_.Terminate(grace_s));
  result.detail = what;
  result.log_tail = LogTail();
  alive_ = false;
  return result;
}

CallResult ProcessExecutor::ReadReply(const std::string& message) {
  CallResult result;
  try {
    result.reply = nlohmann::json::parse(message);
    Result<std::vector<TensorView>> tensors =
        MapTensors(result.reply.value("tensors", nlohmann::json::array()));
    if (!tensors.ok()) {
      result.failure = CallFailure::kProtocol;
      result.detail = tensors.status().ToString();
      return result;
    }
    result.tensors = std::move(tensors).value();
  } catch (const nlohmann::json::exception& e) {
    result.failure = CallFailure::kProtocol;
    result.detail = std::string("malformed reply from the executor: ") + e.what();
  }
  if (result.failure == CallFailure::kNone && !result.reply.value("ok", false))
    result.log_tail = LogTail();
  return result;
}

CallResult ProcessExecutor::Call(const nlohmann::json& request, double timeout_s) {
  Unmap();
  if (!alive_) return Died("the executor had already stopped");
  if (Status sent = SendMessage(request_fd_, JsonText(request)); !sent.ok())
    return Died("sending the request: " + sent.ToString());
  CallClock clock(timeout_s, warmup_);
  Received reply;
  switch (AwaitReply(reply_fd_, options_.stop, &clock, &reply)) {
    case WaitEnd::kStopped:
      return Stopped(CallFailure::kStopped,
                     "the run was stopped by " + SignalName(options_.stop->load()) +
                         " while this call was in flight; executor stopped",
                     0.5);
    case WaitEnd::kTimeout:
      return Stopped(CallFailure::kTimeout, clock.WhyExpired() + "; executor stopped", 2.0);
    case WaitEnd::kMessage:
      break;
  }
  if (!reply.ok) {
    if (reply.error == ReceiveError::kTimeout) {
      return Stopped(CallFailure::kTimeout,
                     clock.WhyExpired() + " (a reply cut short); executor stopped", 2.0);
    }
    return Died(reply.error == ReceiveError::kClosed ? "the executor died"
                                                     : "reading the reply: " + reply.detail);
  }
  return ReadReply(reply.message);
}

bool SameStart(const ExecutorOptions& a, const ExecutorOptions& b) {
  const SandboxSettings& x = a.sandbox;
  const SandboxSettings& y = b.sandbox;
  return a.program == b.program && a.env == b.env && a.log_path == b.log_path &&
         a.scratch_parent == b.scratch_parent && a.stop == b.stop && x.mode == y.mode &&
         x.memory_bytes == y.memory_bytes && x.log_cap_bytes == y.log_cap_bytes &&
         x.process_limit == y.process_limit;
}

std::unique_ptr<ExecutorClient> ExecutorPool::TakeSpare(const ExecutorOptions& options) {
  while (!spares_.empty()) {
    Spare oldest = std::move(spares_.front());
    spares_.pop_front();
    if (SameStart(oldest.options, options)) return std::move(oldest.executor);
    oldest.executor->Discard();
  }
  return nullptr;
}

void ExecutorPool::KeepSpare(const ExecutorOptions& options,
                             std::unique_ptr<ExecutorClient> spare) {
  if (!spare) return;
  while (spares_.size() >= kSpares) {
    spares_.front().executor->Discard();
    spares_.pop_front();
  }
  spares_.push_back({options, std::move(spare)});
}

std::size_t ExecutorPool::SparesFor(const ExecutorOptions& options) const {
  return static_cast<std::size_t>(
      std::count_if(spares_.begin(), spares_.end(),
                    [&](const Spare& spare) { return SameStart(spare.options, options); }));
}

void ExecutorPool::DiscardSpares() {
  for (Spare& spare : spares_) spare.executor->Discard();
  spares_.clear();
}

}  // namespace opverify
