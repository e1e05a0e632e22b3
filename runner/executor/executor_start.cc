// How an executor process starts: its program, sandbox, scratch and
// writable folders, the channels to it, and its capped log
// (ProcessExecutor::Start). The calls to it are executor_client.cc's.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include <spdlog/spdlog.h>

#include "runner/executor/executor_client.h"
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

// The sandbox an executor starts in. Falling back to none where the user
// asked for any (auto) is said once per process.
Result<SandboxChoice> ChooseExecutorSandbox(SandboxMode requested, const std::string& helper) {
  Result<SandboxChoice> choice = ChooseSandbox(requested, helper);
  if (choice.ok() && choice->mode == SandboxMode::kNone && requested == SandboxMode::kAuto) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      spdlog::warn(
          "executors run without a sandbox ({}): an implementation can signal this process, "
          "write where it may and reach the network (docs/SECURITY.md)",
          choice->reason);
    });
  }
  return choice;
}

// The executor's capped log of its stdout and stderr; null without a log_path.
Result<std::unique_ptr<CappedLog>> OpenExecutorLog(const ExecutorOptions& options,
                                                   SandboxMode mode) {
  if (options.log_path.empty()) return std::unique_ptr<CappedLog>();
  return CappedLog::Open(
      options.log_path, options.sandbox.log_cap_bytes,
      std::string("--- opverify-executor starting (sandbox: ") + SandboxModeName(mode) + ")\n");
}

// The descriptors between a rank and its executor (protocol.h): the request
// and reply pipes, the tensor file, and /dev/null for the executor's stdin.
struct ExecutorChannels {
  Pipe requests, replies;
  int tensor_fd = -1;
  int null_fd = -1;

  void Close() {
    CloseFd(&requests.read_fd);
    CloseFd(&requests.write_fd);
    CloseFd(&replies.read_fd);
    CloseFd(&replies.write_fd);
    CloseFd(&tensor_fd);
    CloseFd(&null_fd);
  }
};

// Opens the channels; none stays open when one cannot be.
Result<ExecutorChannels> OpenChannels() {
  ExecutorChannels channels;
  Result<Pipe> requests = MakePipe();
  if (!requests.ok()) return requests.status();
  channels.requests = requests.value();
  Result<Pipe> replies = MakePipe();
  if (!replies.ok()) {
    channels.Close();
    return replies.status();
  }
  channels.replies = replies.value();
  channels.tensor_fd = memfd_create("opverify-tensors", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  // The executor only ever grows the file (protocol.h); sealed against
  // shrinking, no process of the sandbox can cut it short under our mapping
  // (a SIGBUS here), and no further seal can be added.
  if (channels.tensor_fd >= 0 &&
      fcntl(channels.tensor_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0)
    CloseFd(&channels.tensor_fd);
  channels.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (channels.tensor_fd < 0 || channels.null_fd < 0) {
    const std::string error = std::strerror(errno);
    const std::string what = channels.tensor_fd < 0 ? "a sealed memfd" : "/dev/null";
    channels.Close();  // closes both: name what failed first
    return Status::IoError(what + ": " + error);
  }
  return channels;
}

// The executor's program, environment and descriptors: a session of its own
// (the terminal's and the rank's group signals are not its). Only the
// protocol's descriptors cross; stdin is empty (never the rank's:
// `verify < secret`), stdout and stderr go to `output_fd`.
SpawnOptions ExecutorSpawn(const ExecutorOptions& options, const std::string& program,
                           const WritableFolders& folders, const ExecutorChannels& channels,
                           int output_fd) {
  SpawnOptions spawn;
  spawn.argv = {program};
  spawn.env_set = options.env;
  // Only the rank says what a spare preloads (OperatorSession::StartOptions):
  // never one left in the user's environment (a reference executor must not).
  spawn.env_unset.push_back("OPVERIFY_PRELOAD");
  spawn.env_set.insert(spawn.env_set.end(), folders.env.begin(), folders.env.end());
  spawn.new_session = true;
  spawn.fds = {{channels.null_fd, STDIN_FILENO},
               {output_fd, STDOUT_FILENO},
               {output_fd, STDERR_FILENO},
               {channels.requests.read_fd, proto::kRequestFd},
               {channels.replies.write_fd, proto::kReplyFd},
               {channels.tensor_fd, proto::kTensorFd}};
  return spawn;
}

// The sandbox the executor runs in: its scratch and writable folders, its
// limits, the accelerator's device nodes.
SandboxSpec ExecutorSandbox(const ExecutorOptions& options, const SandboxChoice& choice,
                            const std::string& helper, const std::string& scratch,
                            const WritableFolders& folders) {
  SandboxSpec sandbox;
  sandbox.mode = choice.mode;
  sandbox.helper = helper;
  sandbox.scratch = scratch;
  sandbox.writable = folders.bound;
  sandbox.user_namespace = choice.user_namespace;
  sandbox.process_limit = options.sandbox.process_limit;
  sandbox.memory_bytes = options.sandbox.memory_bytes.value_or(DefaultMemoryLimit(1));
  sandbox.device_nodes = AcceleratorDeviceNodes();
  return sandbox;
}

}  // namespace

Result<std::unique_ptr<ProcessExecutor>> ProcessExecutor::Start(const ExecutorOptions& options) {
  const std::string program = options.program.empty() ? DefaultExecutorProgram() : options.program;
  const std::string helper = SandboxHelperBeside(program);
  Result<SandboxChoice> choice = ChooseExecutorSandbox(options.sandbox.mode, helper);
  if (!choice.ok()) return choice.status();
  Result<std::string> scratch = MakeScratch(options.scratch_parent);
  if (!scratch.ok()) return scratch.status();
  auto remove_scratch = [&] {
    std::error_code ec;
    fs::remove_all(scratch.value(), ec);
  };
  Result<std::unique_ptr<CappedLog>> log = OpenExecutorLog(options, choice->mode);
  if (!log.ok()) {
    remove_scratch();
    return log.status();
  }
  Result<ExecutorChannels> opened = OpenChannels();
  if (!opened.ok()) {
    remove_scratch();
    return opened.status();
  }
  ExecutorChannels& channels = opened.value();
  const WritableFolders folders = ExecutorFolders(options, scratch.value());
  // What the executor prints goes to its capped log alone (nowhere without one).
  const int output_fd = log.value() ? log.value()->write_fd() : channels.null_fd;
  Result<Subprocess> process = Subprocess::Spawn(
      Sandboxed(ExecutorSandbox(options, choice.value(), helper, scratch.value(), folders),
                ExecutorSpawn(options, program, folders, channels, output_fd)));
  CloseFd(&channels.requests.read_fd);
  CloseFd(&channels.replies.write_fd);
  CloseFd(&channels.null_fd);
  if (log.value()) log.value()->CloseWriteEnd();
  if (!process.ok()) {
    channels.Close();
    remove_scratch();
    return Status::IoError("starting the executor " + program + ": " + process.status().ToString());
  }
  std::unique_ptr<ProcessExecutor> executor(
      new ProcessExecutor(options, std::move(process).value(), channels.requests.write_fd,
                          channels.replies.read_fd, channels.tensor_fd));
  executor->sandbox_ = choice->mode;
  executor->scratch_ = scratch.value();
  executor->log_ = std::move(log).value();
  return executor;
}

Result<std::unique_ptr<ExecutorClient>> ProcessExecutor::StartClient(
    const ExecutorOptions& options) {
  Result<std::unique_ptr<ProcessExecutor>> started = Start(options);
  if (!started.ok()) return started.status();
  return std::unique_ptr<ExecutorClient>(std::move(started).value());
}

}  // namespace opverify
