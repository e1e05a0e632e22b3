#include "runner/executor/executor_client.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include <spdlog/spdlog.h>

#include "runner/common/strings.h"
#include "runner/executor/protocol.h"
#include "runner/process/channel.h"

namespace fs = std::filesystem;
namespace proto = opverify::executor_protocol;

namespace opverify {

std::string DefaultExecutorProgram() {
  if (const char* env = std::getenv("OPVERIFY_EXECUTOR"); env != nullptr && *env != '\0')
    return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return (self.parent_path() / "opverify-executor").string();
}

namespace {

std::string EnvValue(const ExecutorOptions& options, const std::string& name) {
  std::string found;
  for (const auto& [key, value] : options.env) {
    if (key == name) found = value;
  }
  return found;
}

// The folders the executor writes besides its scratch folder, each made so
// that it can be bound in, and the environment that names them:
// - the compiler caches: the ones its environment names, else Triton's
//   default under the user's $HOME, named explicitly (the executor's $HOME is
//   another folder);
// - its home folder: HOME in its environment (a run's or a --cache-dir's
//   per-rank folder, kept), else a folder in the scratch folder (gone with
//   the executor). Libraries keep code and tuning caches there (~/.flaggems,
//   ~/.cache); the user's own home stays read-only. User site-packages are
//   never read from it: what one operator writes there is no import of the
//   next one's.
struct WritableFolders {
  std::vector<std::string> bound;
  std::vector<std::pair<std::string, std::string>> env;
};

WritableFolders ExecutorFolders(const ExecutorOptions& options, const std::string& scratch) {
  WritableFolders out;
  auto make = [](const std::string& folder) {
    std::error_code ec;
    fs::create_directories(folder, ec);
    return ec ? std::string() : fs::absolute(folder).lexically_normal().string();
  };
  for (const char* name : {"TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR"}) {
    std::string folder = EnvValue(options, name);
    if (const char* inherited = std::getenv(name); folder.empty() && inherited != nullptr)
      folder = inherited;
    const char* home = std::getenv("HOME");
    if (folder.empty() && std::string(name) == "TRITON_CACHE_DIR" && home != nullptr &&
        *home != '\0') {
      folder = (fs::path(home) / ".triton" / "cache").string();
      out.env.emplace_back(name, folder);
    }
    if (folder.empty()) continue;  // inductor's default lies in /tmp: the scratch folder
    if (std::string made = make(folder); !made.empty()) out.bound.push_back(made);
  }
  std::string home = EnvValue(options, "HOME");
  if (home.empty()) {
    home = make((fs::path(scratch) / "home").string());
    if (!home.empty()) out.env.emplace_back("HOME", home);
  } else if (std::string made = make(home); !made.empty()) {
    out.bound.push_back(made);
  }
  if (!home.empty()) out.env.emplace_back("XDG_CACHE_HOME", (fs::path(home) / ".cache").string());
  out.env.emplace_back("PYTHONNOUSERSITE", "1");
  return out;
}

Result<std::string> MakeScratch(const std::string& parent) {
  std::error_code ec;
  const fs::path base = parent.empty() ? fs::temp_directory_path(ec) : fs::path(parent);
  fs::create_directories(base, ec);
  std::string pattern = (fs::absolute(base) / "opverify-scratch-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return Status::IoError("creating the executor's scratch folder " + pattern + ": " +
                           std::strerror(errno));
  }
  return pattern;
}

}  // namespace

Result<std::unique_ptr<ProcessExecutor>> ProcessExecutor::Start(const ExecutorOptions& options) {
  const std::string program = options.program.empty() ? DefaultExecutorProgram() : options.program;
  const std::string helper = SandboxHelperBeside(program);
  Result<SandboxChoice> choice = ChooseSandbox(options.sandbox.mode, helper);
  if (!choice.ok()) return choice.status();
  if (choice->mode == SandboxMode::kNone && options.sandbox.mode == SandboxMode::kAuto) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      spdlog::warn(
          "executors run without a sandbox ({}): an implementation can signal this process, "
          "write where it may and reach the network (docs/SECURITY.md)",
          choice->reason);
    });
  }
  Result<std::string> scratch = MakeScratch(options.scratch_parent);
  if (!scratch.ok()) return scratch.status();
  auto remove_scratch = [&] {
    std::error_code ec;
    fs::remove_all(scratch.value(), ec);
  };
  std::unique_ptr<CappedLog> log;
  if (!options.log_path.empty()) {
    Result<std::unique_ptr<CappedLog>> opened =
        CappedLog::Open(options.log_path, options.sandbox.log_cap_bytes,
                        std::string("--- opverify-executor starting (sandbox: ") +
                            SandboxModeName(choice->mode) + ")\n");
    if (!opened.ok()) {
      remove_scratch();
      return opened.status();
    }
    log = std::move(opened).value();
  }
  Result<Pipe> requests = MakePipe();
  if (!requests.ok()) {
    remove_scratch();
    return requests.status();
  }
  Result<Pipe> replies = MakePipe();
  if (!replies.ok()) {
    CloseFd(&requests->read_fd);
    CloseFd(&requests->write_fd);
    remove_scratch();
    return replies.status();
  }
  int tensor_fd = memfd_create("opverify-tensors", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  // The executor only ever grows the file (protocol.h); sealed against
  // shrinking, no process of the sandbox can cut it short under our mapping
  // (a SIGBUS here), and no further seal can be added.
  if (tensor_fd >= 0 && fcntl(tensor_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0)
    CloseFd(&tensor_fd);
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  auto close_all = [&] {
    CloseFd(&requests->read_fd);
    CloseFd(&requests->write_fd);
    CloseFd(&replies->read_fd);
    CloseFd(&replies->write_fd);
    CloseFd(&tensor_fd);
    CloseFd(&null_fd);
    remove_scratch();
  };
  if (tensor_fd < 0 || null_fd < 0) {
    const std::string error = std::strerror(errno);
    close_all();
    return Status::IoError(std::string(tensor_fd < 0 ? "a sealed memfd" : "/dev/null") + ": " +
                           error);
  }
  const WritableFolders folders = ExecutorFolders(options, scratch.value());
  SpawnOptions spawn;
  spawn.argv = {program};
  spawn.env_set = options.env;
  spawn.env_set.insert(spawn.env_set.end(), folders.env.begin(), folders.env.end());
  spawn.new_session = true;  // the terminal's and the rank's group signals are not its
  // Only the protocol's descriptors cross; stdin is empty (never the rank's:
  // `verify < secret`), and what the executor prints goes to its capped log
  // alone (nowhere without one).
  const int output_fd = log ? log->write_fd() : null_fd;
  spawn.fds = {{null_fd, STDIN_FILENO},
               {output_fd, STDOUT_FILENO},
               {output_fd, STDERR_FILENO},
               {requests->read_fd, proto::kRequestFd},
               {replies->write_fd, proto::kReplyFd},
               {tensor_fd, proto::kTensorFd}};
  SandboxSpec sandbox;
  sandbox.mode = choice->mode;
  sandbox.helper = helper;
  sandbox.scratch = scratch.value();
  sandbox.writable = folders.bound;
  sandbox.user_namespace = choice->user_namespace;
  sandbox.process_limit = options.sandbox.process_limit;
  sandbox.memory_bytes = options.sandbox.memory_bytes.value_or(DefaultMemoryLimit(1));
  sandbox.device_nodes = AcceleratorDeviceNodes();
  Result<Subprocess> process = Subprocess::Spawn(Sandboxed(sandbox, std::move(spawn)));
  CloseFd(&requests->read_fd);
  CloseFd(&replies->write_fd);
  CloseFd(&null_fd);
  if (log) log->CloseWriteEnd();
  if (!process.ok()) {
    close_all();
    return Status::IoError("starting the executor " + program + ": " + process.status().ToString());
  }
  std::unique_ptr<ProcessExecutor> executor(new ProcessExecutor(
      options, std::move(process).value(), requests->write_fd, replies->read_fd, tensor_fd));
  executor->sandbox_ = choice->mode;
  executor->scratch_ = scratch.value();
  executor->log_ = std::move(log);
  return executor;
}

Result<std::unique_ptr<ExecutorClient>> ProcessExecutor::StartClient(
    const ExecutorOptions& options) {
  Result<std::unique_ptr<ProcessExecutor>> started = Start(options);
  if (!started.ok()) return started.status();
  return std::unique_ptr<ExecutorClient>(std::move(started).value());
}

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
  if (process_.running()) process_.Terminate(0.5);
  Stop();
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

}  // namespace

CallResult ProcessExecutor::Call(const nlohmann::json& request, double timeout_s) {
  CallResult result;
  Unmap();
  auto died = [&](const std::string& what) {
    result.failure = CallFailure::kDied;
    std::optional<ExitStatus> status = process_.Wait(5.0);
    status = Ended(status ? *status : process_.Terminate(1.0));
    result.exit = status;
    result.detail = what + " (" + status->Describe() + ")";
    result.log_tail = LogTail();
    alive_ = false;
    return result;
  };
  auto stopped = [&](CallFailure failure, const std::string& what, double grace_s) {
    result.failure = failure;
    result.exit = Ended(process_.Terminate(grace_s));
    result.detail = what;
    result.log_tail = LogTail();
    alive_ = false;
    return result;
  };
  auto stopping = [&] { return options_.stop != nullptr && options_.stop->load() != 0; };
  if (!alive_) return died("the executor had already stopped");
  if (Status sent = SendMessage(
          request_fd_, request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      !sent.ok())
    return died("sending the request: " + sent.ToString());
  // Waits in slices, so that a stop signal ends the wait within one slice
  // and warm-up events move the deadline.
  constexpr double kSliceS = 0.1;
  CallClock clock(timeout_s, warmup_);
  Received reply;
  for (;;) {
    if (stopping()) {
      return stopped(CallFailure::kStopped,
                     "the run was stopped by " + SignalName(options_.stop->load()) +
                         " while this call was in flight; executor stopped",
                     0.5);
    }
    const bool readable = WaitReadable(reply_fd_, std::min(kSliceS, clock.LeftS()));
    clock.Charge();
    if (!readable) {
      if (clock.LeftS() <= 0 || clock.Expired()) {
        return stopped(CallFailure::kTimeout, clock.WhyExpired() + "; executor stopped", 2.0);
      }
      continue;
    }
    // The rest of a message that has begun comes at once; a slow one is a timeout like any.
    reply = ReceiveMessage(reply_fd_, std::max(clock.LeftS(), kSliceS));
    if (!reply.ok) break;
    const nlohmann::json event = nlohmann::json::parse(reply.message, nullptr, false);
    const std::optional<bool> warming = WarmupEvent(event);
    if (!warming) break;
    clock.SetWarming(*warming);
  }
  if (!reply.ok) {
    if (reply.error == ReceiveError::kTimeout) {
      return stopped(CallFailure::kTimeout,
                     clock.WhyExpired() + " (a reply cut short); executor stopped", 2.0);
    }
    return died(reply.error == ReceiveError::kClosed ? "the executor died"
                                                     : "reading the reply: " + reply.detail);
  }
  try {
    result.reply = nlohmann::json::parse(reply.message);
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
