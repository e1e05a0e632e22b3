#include "runner/process/sandbox.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "runner/common/strings.h"

namespace fs = std::filesystem;

namespace opverify {
namespace {

// The limits opverify-sandbox sets (rlimits are kept across exec and fork).
std::vector<std::string> LimitArgv(const SandboxSpec& spec) {
  std::vector<std::string> argv;
  auto add = [&](const char* option, std::uint64_t value) {
    if (value > 0) argv.insert(argv.end(), {option, std::to_string(value)});
  };
  add("--memory", spec.memory_bytes);
  add("--file-size", spec.memory_bytes);
  if (spec.device_nodes.empty()) add("--address-space", spec.memory_bytes);
  // Our init counts the namespace's processes; RLIMIT_NPROC counts per user,
  // so it is set only where the sandbox's user is its own.
  if (spec.mode == SandboxMode::kBwrap || spec.mode == SandboxMode::kUnshare)
    add("--processes", spec.process_limit);
  if (spec.user_namespace) add("--nproc", spec.process_limit);
  return argv;
}

// The namespaces and mounts every sandboxed program gets from bwrap; the
// unshare path builds the same with opverify-sandbox --mounts.
std::vector<std::string> BwrapArgv(const SandboxSpec& spec, const std::string& cwd) {
  std::vector<std::string> argv = {"bwrap"};
  if (spec.user_namespace) {
    // Root inside maps to us; no capability of ours outside, none inside.
    argv.insert(argv.end(), {"--unshare-user", "--uid", "0", "--gid", "0", "--disable-userns"});
  }
  // Our init is PID 1 (--as-pid-1): not dumpable, so nothing inside ptraces it.
  // The scratch folder stays where it is: operator files may lie under /tmp too.
  argv.insert(argv.end(), {"--die-with-parent", "--new-session", "--cap-drop", "ALL",
                           "--as-pid-1", "--unshare-pid", "--unshare-net", "--unshare-ipc",
                           "--unshare-uts", "--unshare-cgroup-try", "--ro-bind", "/", "/", "--dev",
                           "/dev", "--proc", "/proc", "--tmpfs", "/run"});
  if (const std::uint64_t shm = SharedMemoryBytes(spec.memory_bytes); shm > 0)
    argv.insert(argv.end(), {"--size", std::to_string(shm)});
  argv.insert(argv.end(), {"--tmpfs", "/dev/shm", "--bind", spec.scratch, spec.scratch});
  for (const std::string& dir : spec.writable) {
    argv.insert(argv.end(), {"--bind", dir, dir});
  }
  for (const std::string& node : spec.device_nodes) {
    argv.insert(argv.end(), {"--dev-bind", node, node});
  }
  for (const std::string& socket : HostUnixSockets()) {
    argv.insert(argv.end(), {"--ro-bind", "/dev/null", socket});
  }
  // /dev and /run themselves hold nothing to write (their submounts stay as they are).
  argv.insert(argv.end(), {"--remount-ro", "/dev", "--remount-ro", "/run"});
  if (!cwd.empty()) argv.insert(argv.end(), {"--chdir", cwd});
  argv.emplace_back("--");
  return argv;
}

// opverify-sandbox's options for the stage that execs the program: the
// namespace's init (with the mounts under unshare), or only the limits.
std::vector<std::string> HelperArgv(const SandboxSpec& spec, bool init, bool mounts) {
  std::vector<std::string> argv = {spec.helper};
  if (init) argv.emplace_back("--init");
  if (mounts) {
    argv.insert(argv.end(), {"--mounts", "--drop-caps", "--scratch", spec.scratch});
    for (const std::string& dir : spec.writable) argv.insert(argv.end(), {"--rw", dir});
    for (const std::string& node : spec.device_nodes) argv.insert(argv.end(), {"--dev", node});
    for (const std::string& socket : HostUnixSockets())
      argv.insert(argv.end(), {"--hide", socket});
    if (const std::uint64_t shm = SharedMemoryBytes(spec.memory_bytes); shm > 0)
      argv.insert(argv.end(), {"--shm-size", std::to_string(shm)});
  }
  for (std::string& arg : LimitArgv(spec)) argv.push_back(std::move(arg));
  argv.emplace_back("--");
  return argv;
}

std::string CurrentDir() {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  return ec ? std::string() : cwd.string();
}

// Starts `true` in the sandbox `mode` the way an executor would start; ok when it ran.
Status TrySandbox(SandboxMode mode, bool user_namespace, const std::string& helper) {
  std::string pattern = (fs::temp_directory_path() / "opverify-sandbox-check-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr)
    return Status::IoError("cannot create a scratch folder in " + pattern);
  SandboxSpec spec;
  spec.mode = mode;
  spec.helper = helper;
  spec.scratch = pattern;
  spec.user_namespace = user_namespace;
  spec.device_nodes = AcceleratorDeviceNodes();
  SpawnOptions options;
  options.argv = {"true"};
  Result<CapturedRun> run = RunAndCapture(Sandboxed(spec, options), 30.0, 1.0, 4000);
  std::error_code ec;
  fs::remove_all(pattern, ec);
  if (!run.ok()) return run.status();
  if (run->status.success()) return Status::Ok();
  std::string output = run->output;
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  return Status::Unsupported(std::string(SandboxModeName(mode)) + " does not start here (" +
                             run->status.Describe() + (output.empty() ? "" : ": " + output) + ")");
}

}  // namespace

std::optional<SandboxMode> ParseSandboxMode(std::string_view name) {
  if (name == "auto") return SandboxMode::kAuto;
  if (name == "bwrap") return SandboxMode::kBwrap;
  if (name == "unshare") return SandboxMode::kUnshare;
  if (name == "none") return SandboxMode::kNone;
  return std::nullopt;
}

const char* SandboxModeName(SandboxMode mode) {
  switch (mode) {
    case SandboxMode::kAuto:
      return "auto";
    case SandboxMode::kBwrap:
      return "bwrap";
    case SandboxMode::kUnshare:
      return "unshare";
    case SandboxMode::kNone:
      break;
  }
  return "none";
}

namespace {

// `mode` in a user namespace of its own where that starts, else without one.
Result<SandboxChoice> TryMode(SandboxMode mode, const std::string& helper) {
  const std::string name = SandboxModeName(mode);
  Status with_user = TrySandbox(mode, true, helper);
  if (with_user.ok()) return SandboxChoice{mode, name + " works", true};
  Status without = TrySandbox(mode, false, helper);
  if (!without.ok()) return without;
  return SandboxChoice{mode,
                       name + " works without a user namespace (no process limit): " +
                           with_user.message(),
                       false};
}

}  // namespace

Result<SandboxChoice> ChooseSandbox(SandboxMode requested, const std::string& helper) {
  static std::mutex mutex;
  static std::map<std::pair<SandboxMode, std::string>, Result<SandboxChoice>> tried;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(requested, helper);
  if (auto found = tried.find(key); found != tried.end()) return found->second;
  Result<SandboxChoice> choice = Status::Internal("not tried");
  if (requested == SandboxMode::kNone) {
    choice = SandboxChoice{SandboxMode::kNone, "--sandbox none"};
  } else if (requested != SandboxMode::kAuto) {
    choice = TryMode(requested, helper);
    if (!choice.ok()) {
      choice = Status::Unsupported("--sandbox " + std::string(SandboxModeName(requested)) + ": " +
                                   choice.status().message());
    }
  } else {
    std::string why;
    for (SandboxMode mode : {SandboxMode::kBwrap, SandboxMode::kUnshare}) {
      choice = TryMode(mode, helper);
      if (choice.ok()) {
        if (!why.empty()) choice->reason += " (" + why + ")";
        break;
      }
      why += (why.empty() ? "" : "; ") + choice.status().message();
    }
    if (!choice.ok()) {
      choice = SandboxChoice{SandboxMode::kNone, "no namespaces here: " + why};
    }
  }
  tried.emplace(key, choice);
  return choice;
}

SpawnOptions Sandboxed(const SandboxSpec& spec, SpawnOptions inner) {
  std::vector<std::string> argv;
  const std::string parent = std::to_string(getpid());
  switch (spec.mode) {
    case SandboxMode::kBwrap:
      argv = BwrapArgv(spec, inner.working_dir.empty() ? CurrentDir() : inner.working_dir);
      for (std::string& arg : HelperArgv(spec, true, false)) argv.push_back(std::move(arg));
      break;
    case SandboxMode::kUnshare:
      // The first opverify-sandbox dies with us (PR_SET_PDEATHSIG) and execs
      // unshare, which kills its child, the namespace's init, when it dies.
      argv = {spec.helper, "--parent", parent, "--", "unshare"};
      if (spec.user_namespace) argv.insert(argv.end(), {"--user", "--map-root-user"});
      argv.insert(argv.end(), {"--pid", "--fork", "--kill-child", "--mount-proc", "--net", "--ipc",
                               "--uts", "--"});
      for (std::string& arg : HelperArgv(spec, true, true)) argv.push_back(std::move(arg));
      break;
    case SandboxMode::kAuto:
    case SandboxMode::kNone:
      argv = {spec.helper, "--parent", parent};
      for (std::string& arg : HelperArgv(spec, false, false)) {
        if (arg != spec.helper) argv.push_back(std::move(arg));
      }
      break;
  }
  for (std::string& arg : inner.argv) argv.push_back(std::move(arg));
  inner.argv = std::move(argv);
  inner.env_set.emplace_back("TMPDIR", spec.scratch);
  inner.env_set.emplace_back("OPVERIFY_SANDBOX", SandboxModeName(spec.mode));
  return inner;
}

ExitStatus SandboxedExitStatus(SandboxMode mode, const ExitStatus& launcher) {
  const bool namespaced = mode == SandboxMode::kBwrap || mode == SandboxMode::kUnshare;
  if (!namespaced || !launcher.exited || launcher.code <= 128 || launcher.code > 128 + 64)
    return launcher;
  ExitStatus status;
  status.signal = launcher.code - 128;
  return status;
}

std::vector<std::string> AcceleratorDeviceNodes() {
  std::vector<std::string> nodes;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator("/dev", ec)) {
    const std::string name = entry.path().filename().string();
    const bool nvidia =
        name.rfind("nvidia", 0) == 0;  // nvidia0.., nvidiactl, nvidia-uvm(-tools), nvidia-caps
    const bool ascend = name.rfind("davinci", 0) == 0 || name == "devmm_svm" || name == "hisi_hdc";
    if (nvidia || ascend || name == "dri") nodes.push_back(entry.path().string());
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

std::uint64_t SharedMemoryBytes(std::uint64_t memory_bytes) {
  if (memory_bytes == 0) return 0;
  return std::max<std::uint64_t>(memory_bytes / 4, std::uint64_t{64} << 20);
}

std::vector<std::string> HostUnixSockets() {
  // "Num RefCount Protocol Flags Type St Inode Path": the path is the 8th field.
  std::ifstream table("/proc/net/unix");
  std::vector<std::string> sockets;
  std::string line;
  std::getline(table, line);  // the header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string field, path;
    for (int i = 0; i < 7 && fields >> field; ++i) {
    }
    if (!(fields >> std::ws) || !std::getline(fields, path) || path.empty() || path[0] != '/')
      continue;  // unbound, or abstract ("@name")
    // The sandbox's /dev and /run are its own.
    if (path.rfind("/dev/", 0) == 0 || path.rfind("/run/", 0) == 0) continue;
    struct stat info {};
    if (lstat(path.c_str(), &info) == 0 && S_ISSOCK(info.st_mode)) sockets.push_back(path);
  }
  std::sort(sockets.begin(), sockets.end());
  sockets.erase(std::unique(sockets.begin(), sockets.end()), sockets.end());
  return sockets;
}

std::uint64_t DefaultMemoryLimit(int ranks_per_node) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  for (std::string line; std::getline(meminfo, line);) {
    std::istringstream fields(line);
    if (fields >> key >> kib && key == "MemTotal:") break;
    kib = 0;
  }
  if (kib == 0) return 0;  // unknown: no limit rather than a wrong one
  return static_cast<std::uint64_t>(static_cast<double>(kib) * 1024.0 * 0.8 /
                                    static_cast<double>(std::max(ranks_per_node, 1)));
}

Result<std::uint64_t> ParseByteSize(std::string_view text) {
  const std::string given(text);
  if (given == "none") return std::uint64_t{0};
  char* end = nullptr;
  const double number = std::strtod(given.c_str(), &end);
  std::string unit(end);
  if (unit.size() > 1 && (unit.substr(1) == "iB" || unit.substr(1) == "B")) unit.resize(1);
  static const std::map<std::string, double> kScale = {{"", 1.0},
                                                       {"K", 1024.0},
                                                       {"M", 1024.0 * 1024},
                                                       {"G", 1024.0 * 1024 * 1024},
                                                       {"T", 1024.0 * 1024 * 1024 * 1024}};
  const auto scale = kScale.find(unit);
  const double bytes = number * (scale == kScale.end() ? 0 : scale->second);
  if (end == given.c_str() || scale == kScale.end() || !std::isfinite(bytes) || bytes < 0 ||
      bytes > 1.8e19) {
    return Status::InvalidInput("'" + given + "' is not a size (e.g. 4096, 64M, 8G, 1.5T or none)");
  }
  return static_cast<std::uint64_t>(bytes);
}

std::string FormatByteSize(std::uint64_t bytes) {
  if (bytes == 0) return "none";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? Printf("%llu B", static_cast<unsigned long long>(bytes))
                   : Printf("%.3g %s", value, units[unit]);
}

std::string SandboxHelperBeside(const std::string& executor_program) {
  if (const char* env = std::getenv("OPVERIFY_SANDBOX_HELPER"); env != nullptr && *env != '\0')
    return env;
  return (fs::path(executor_program).parent_path() / "opverify-sandbox").string();
}

}  // namespace opverify
