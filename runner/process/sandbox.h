// The sandbox an executor runs in (docs/SECURITY.md): its own user (where
// the machine allows), PID, network, IPC and mount namespaces, a read-only
// filesystem but for its scratch folder and the compiler caches, no host
// unix socket, only the accelerators' device nodes, its own session, memory,
// file-size and process limits, our init as its PID 1, killed with its
// parent. bubblewrap (`bwrap`) where it works, else util-linux `unshare` with
// our opverify-sandbox doing the mounts, else none (a warning; the mode is
// recorded). The wrapping is argv only: the launch stays posix_spawn
// (subprocess.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/common/status.h"
#include "runner/process/subprocess.h"

namespace opverify {

enum class SandboxMode { kAuto, kBwrap, kUnshare, kNone };

std::optional<SandboxMode> ParseSandboxMode(std::string_view name);  // auto, bwrap, unshare, none
const char* SandboxModeName(SandboxMode mode);

// What the user chose (flags, manifest): the same for every executor of a run.
struct SandboxSettings {
  SandboxMode mode = SandboxMode::kAuto;
  std::optional<std::uint64_t> memory_bytes;  // nullopt: DefaultMemoryLimit(1); 0: no limit
  std::uint64_t log_cap_bytes = std::uint64_t{64} << 20;  // the executor log's size limit
  // Processes of one executor's sandbox (SandboxSpec::process_limit); 0: none.
  std::uint64_t process_limit = 1024;
};

// The mode a request gets on this machine, and why. `auto` tries bwrap, then
// unshare (each by starting `true` inside it the way an executor would be),
// then falls back to none; an explicit mode that does not work is an error.
// Tried once per process and mode.
struct SandboxChoice {
  SandboxMode mode = SandboxMode::kNone;
  std::string reason;  // "bwrap works", or why the fallback was taken
  // A user namespace of its own (tried first): the process limit holds only in one.
  bool user_namespace = false;
};
Result<SandboxChoice> ChooseSandbox(SandboxMode requested, const std::string& helper);

// One sandboxed program.
struct SandboxSpec {
  SandboxMode mode = SandboxMode::kNone;  // a chosen mode (never kAuto)
  std::string helper;                     // opverify-sandbox's path
  std::string scratch;                    // writable; $TMPDIR inside
  std::vector<std::string> writable;      // further folders it may write (made if missing)
  bool user_namespace = false;            // SandboxChoice::user_namespace
  // 0: none. Else RLIMIT_DATA and RLIMIT_FSIZE, RLIMIT_AS too where there
  // are no device nodes (CUDA reserves far more address space than it uses),
  // and a /dev/shm of a quarter of it (SharedMemoryBytes).
  std::uint64_t memory_bytes = 0;
  // Processes the init allows in the namespace (it ends the namespace past
  // them), and RLIMIT_NPROC in its user namespace (not for root); 0: none.
  std::uint64_t process_limit = 0;
  std::vector<std::string> device_nodes;  // bound in; AcceleratorDeviceNodes() by default
};

// The size of a sandbox's /dev/shm: a quarter of the memory limit, at least
// 64 MiB (CUDA's and Python's semaphores, small IPC); 0 (no limit): unsized.
std::uint64_t SharedMemoryBytes(std::uint64_t memory_bytes);

// The unix sockets bound to a path in this network namespace (/proc/net/unix)
// that exist now, but for those in /dev and /run (the sandbox's own): a
// process in another network namespace still reaches them through the
// filesystem. Abstract sockets belong to the network namespace.
std::vector<std::string> HostUnixSockets();

// `inner` wrapped so that it starts inside the sandbox: argv gets the
// launcher in front, the environment gets TMPDIR and OPVERIFY_SANDBOX (the
// mode, for the executor's classification of what the sandbox refused).
// In a namespace mode, /run is an empty read-only tmpfs and each of
// HostUnixSockets() is covered by /dev/null.
SpawnOptions Sandboxed(const SandboxSpec& spec, SpawnOptions inner);

// The program's own status from the launcher's: bwrap's and our init's exit
// code 128+N means the program died of signal N.
ExitStatus SandboxedExitStatus(SandboxMode mode, const ExitStatus& launcher);

// The accelerators' device nodes present here: /dev/nvidia*, /dev/nvidia-caps,
// /dev/nvidia-uvm*, /dev/davinci*, /dev/devmm_svm, /dev/hisi_hdc, /dev/dri.
std::vector<std::string> AcceleratorDeviceNodes();

// The default memory limit: 80% of the machine's memory (MemTotal) shared by
// the ranks of one node.
std::uint64_t DefaultMemoryLimit(int ranks_per_node);

// "64M", "8G", "1.5G", "4096", "none" (0); K, M, G, T are powers of 1024.
Result<std::uint64_t> ParseByteSize(std::string_view text);
std::string FormatByteSize(std::uint64_t bytes);  // "64 MiB", "7.5 GiB"

// opverify-sandbox beside `executor_program` (OPVERIFY_SANDBOX_HELPER overrides).
std::string SandboxHelperBeside(const std::string& executor_program);

}  // namespace opverify
