// opverify-sandbox: the last steps before a sandboxed program starts
// (runner/process/sandbox.h builds its command line; docs/SECURITY.md).
//
//   opverify-sandbox [--parent PID] [--init] [--mounts --scratch DIR [--rw DIR]...
//                    [--dev NODE]... [--hide SOCKET]... [--shm-size BYTES]] [--drop-caps]
//                    [--memory BYTES] [--address-space BYTES] [--file-size BYTES]
//                    [--nproc N] [--processes N] -- PROGRAM ARGS...
//
// Always: dies with its parent (PR_SET_PDEATHSIG; with --parent, refuses to
// start when that parent is already gone), a session of its own, no new
// privileges, then execs PROGRAM. The limits, soft and hard: --memory
// RLIMIT_DATA, --address-space RLIMIT_AS, --file-size RLIMIT_FSIZE,
// --nproc RLIMIT_NPROC (counted per user: in a user namespace of its own it
// holds for the sandbox alone, and never for root); --processes N: the
// init's own count of the namespace's processes.
// --mounts (under `unshare --mount ...`): the filesystem read-only but for
// --scratch and the --rw folders, a /dev of its own with only the basic nodes,
// the --dev ones and a /dev/shm of --shm-size, an empty read-only /run, each
// --hide socket covered by /dev/null, /proc/sys and friends read-only.
// --init (as the PID namespace's PID 1): forks PROGRAM as PID 2 and stays the
// namespace's init, not dumpable (nothing inside can ptrace it): it reaps
// orphans and exits with PROGRAM's status (128+N for signal N), which ends
// the namespace and everything left in it.
// --drop-caps: no capabilities left (the bounding set included).
// Exit 125: the sandbox could not be set up (the reason on stderr).
#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "runner/common/version.h"

namespace {

constexpr int kSetupFailed = 125;

struct Args {
  pid_t parent = 0;
  bool init = false;
  bool mounts = false;
  bool drop_caps = false;
  std::string scratch;
  std::vector<std::string> rw;
  std::vector<std::string> dev;
  std::vector<std::string> hide;
  unsigned long long shm_size = 0;
  unsigned long long max_processes = 0;  // --processes: the init's count
  std::vector<std::pair<int, unsigned long long>> limits;  // {RLIMIT_*, value}
  std::vector<char*> program;
};

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "opverify-sandbox: %s\n", what.c_str());
  std::fflush(stderr);
  _exit(kSetupFailed);
}

std::string Errno() { return std::strerror(errno); }

Args Parse(int argc, char** argv) {
  Args args;
  int i = 1;
  auto value = [&](const char* option) -> std::string {
    if (i + 1 >= argc) Fail(std::string(option) + " needs a value");
    return argv[++i];
  };
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "--version") {
      std::printf("%s\n", opverify::VersionLine().c_str());
      std::exit(0);
    }
    if (arg == "--help") {
      std::printf(
          "usage: opverify-sandbox [--parent PID] [--init] [--mounts --scratch DIR [--rw DIR]...\n"
          "                        [--dev NODE]... [--hide SOCKET]... [--shm-size BYTES]]\n"
          "                        [--drop-caps] [--memory BYTES] [--address-space BYTES]\n"
          "                        [--file-size BYTES] [--nproc N] [--processes N] -- PROGRAM "
          "ARGS...\n"
          "The last steps before opverify starts a sandboxed executor (docs/SECURITY.md).\n"
          "Exit codes: PROGRAM's own, or %d when a step fails before PROGRAM starts.\n",
          kSetupFailed);
      std::exit(0);
    }
    if (arg == "--parent") {
      args.parent = static_cast<pid_t>(std::atol(value("--parent").c_str()));
    } else if (arg == "--init") {
      args.init = true;
    } else if (arg == "--mounts") {
      args.mounts = true;
    } else if (arg == "--hide") {
      args.hide.push_back(value("--hide"));
    } else if (arg == "--shm-size") {
      args.shm_size = std::strtoull(value("--shm-size").c_str(), nullptr, 10);
    } else if (arg == "--address-space") {
      args.limits.emplace_back(RLIMIT_AS, std::strtoull(value(arg.c_str()).c_str(), nullptr, 10));
    } else if (arg == "--file-size") {
      args.limits.emplace_back(RLIMIT_FSIZE, std::strtoull(value(arg.c_str()).c_str(), nullptr, 10));
    } else if (arg == "--processes") {
      args.max_processes = std::strtoull(value(arg.c_str()).c_str(), nullptr, 10);
    } else if (arg == "--nproc") {
      args.limits.emplace_back(RLIMIT_NPROC, std::strtoull(value(arg.c_str()).c_str(), nullptr, 10));
    } else if (arg == "--drop-caps") {
      args.drop_caps = true;
    } else if (arg == "--scratch") {
      args.scratch = value("--scratch");
    } else if (arg == "--rw") {
      args.rw.push_back(value("--rw"));
    } else if (arg == "--dev") {
      args.dev.push_back(value("--dev"));
    } else if (arg == "--memory") {
      args.limits.emplace_back(RLIMIT_DATA, std::strtoull(value(arg.c_str()).c_str(), nullptr, 10));
    } else {
      Fail("unknown option " + arg);
    }
  }
  for (; i < argc; ++i) args.program.push_back(argv[i]);
  if (args.program.empty()) Fail("no program given after --");
  args.program.push_back(nullptr);
  return args;
}

void DropCapabilities() {
  for (int cap = 0; cap <= 63; ++cap) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      Fail("PR_CAPBSET_DROP: " + Errno());
  }
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capset, &header, data) != 0) Fail("capset: " + Errno());
}

int OpenPath(const std::string& path) {
  const int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) Fail("cannot open " + path + ": " + Errno());
  return fd;
}

std::string FdPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

void MakeDirs(const std::string& path) {
  for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string part = path.substr(0, slash);
    if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) Fail("mkdir " + part + ": " + Errno());
    if (slash == std::string::npos) break;
  }
}

// Binds what `fd` names at `target` (made: a folder or an empty file), writable or not.
void BindAt(int fd, const std::string& target, bool writable) {
  struct stat info {};
  if (fstat(fd, &info) != 0) Fail("stat " + target + ": " + Errno());
  if (S_ISDIR(info.st_mode)) {
    MakeDirs(target);
  } else {
    MakeDirs(target.substr(0, target.rfind('/')));
    const int made = open(target.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (made < 0 && errno != EEXIST) Fail("creating " + target + ": " + Errno());
    if (made >= 0) close(made);
  }
  if (mount(FdPath(fd).c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
    Fail("binding " + target + ": " + Errno());
  }
  const unsigned long flags = MS_BIND | MS_REMOUNT | MS_NOSUID | (writable ? 0 : MS_RDONLY);
  if (mount(nullptr, target.c_str(), nullptr, flags, nullptr) != 0)
    Fail("remounting " + target + ": " + Errno());
}

// Covers a socket that still exists with `null_fd` (read-only): a connect finds no socket.
void HideSocket(int null_fd, const std::string& path) {
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0 || !S_ISSOCK(info.st_mode)) return;  // gone or covered
  if (mount(FdPath(null_fd).c_str(), path.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    if (errno == ENOENT) return;  // removed since the lstat: nothing left to reach
    Fail("covering the socket " + path + ": " + Errno());
  }
  if (mount(nullptr, path.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID, nullptr) !=
      0) {
    Fail("covering the socket " + path + ": " + Errno());
  }
}

// mountinfo's mount point field, its \040-style escapes undone.
std::string Unescape(const std::string& field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      out += static_cast<char>(std::strtol(field.substr(i + 1, 3).c_str(), nullptr, 8));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

// Every mount read-only, its nosuid/nodev/noexec kept (/proc is the namespace's own: later).
void RemountAllReadOnly() {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::vector<std::pair<std::string, unsigned long>> mounts;
  for (std::string line; std::getline(mountinfo, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point, options;
    if (!(fields >> id >> parent >> device >> root >> point >> options)) continue;
    point = Unescape(point);
    if (point == "/proc" || point.rfind("/proc/", 0) == 0) continue;
    unsigned long flags = MS_BIND | MS_REMOUNT | MS_RDONLY;
    std::istringstream opts(options);
    for (std::string opt; std::getline(opts, opt, ',');) {
      if (opt == "nosuid") flags |= MS_NOSUID;
      if (opt == "nodev") flags |= MS_NODEV;
      if (opt == "noexec") flags |= MS_NOEXEC;
      if (opt == "noatime") flags |= MS_NOATIME;
      if (opt == "nodiratime") flags |= MS_NODIRATIME;
      if (opt == "relatime") flags |= MS_RELATIME;
    }
    mounts.emplace_back(point, flags);
  }
  for (const auto& [point, flags] : mounts) {
    if (mount(nullptr, point.c_str(), nullptr, flags, nullptr) == 0) continue;
    if (point == "/") Fail("cannot make / read-only: " + Errno());
    // A mount hidden under another (ENOENT) or one the kernel will not
    // remount; it cannot be reached for writing through its path here.
    if (errno != ENOENT && errno != EACCES) {
      std::fprintf(stderr, "opverify-sandbox: warning: %s stays as it is: %s\n", point.c_str(),
                   Errno().c_str());
    }
  }
}

void SetUpMounts(const Args& args) {
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    Fail("making / private: " + Errno());
  // Open what is bound in later before /dev is covered.
  const int scratch = OpenPath(args.scratch);
  std::vector<std::pair<std::string, int>> rw, dev;
  for (const std::string& dir : args.rw) rw.emplace_back(dir, OpenPath(dir));
  for (const char* basic :
       {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}) {
    dev.emplace_back(basic, OpenPath(basic));
  }
  for (const std::string& node : args.dev) dev.emplace_back(node, OpenPath(node));
  const int null_fd = OpenPath("/dev/null");

  RemountAllReadOnly();

  if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1m") != 0) {
    Fail("mounting /dev: " + Errno());
  }
  for (const auto& [node, fd] : dev) BindAt(fd, node, true);
  for (const auto& [link, to] :
       std::vector<std::pair<const char*, const char*>>{{"/dev/fd", "/proc/self/fd"},
                                                        {"/dev/stdin", "/proc/self/fd/0"},
                                                        {"/dev/stdout", "/proc/self/fd/1"},
                                                        {"/dev/stderr", "/proc/self/fd/2"}}) {
    if (symlink(to, link) != 0) Fail(std::string("symlink ") + link + ": " + Errno());
  }
  MakeDirs("/dev/shm");
  const std::string shm_options =
      "mode=1777" + (args.shm_size > 0 ? ",size=" + std::to_string(args.shm_size) : "");
  if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, shm_options.c_str()) != 0) {
    Fail("mounting /dev/shm: " + Errno());
  }
  // The host's daemons listen in /run (/var/run): none of them is reachable.
  if (mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=1m") != 0)
    Fail("mounting /run: " + Errno());
  BindAt(scratch, args.scratch, true);
  for (const auto& [dir, fd] : rw) BindAt(fd, dir, true);
  for (const std::string& socket : args.hide) HideSocket(null_fd, socket);
  for (const char* empty : {"/dev", "/run"}) {
    const unsigned long flags = MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
    if (mount(nullptr, empty, nullptr, flags, nullptr) != 0)
      Fail(std::string("making ") + empty + " read-only: " + Errno());
  }
  for (const char* covered :
       {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"}) {
    if (access(covered, F_OK) == 0) BindAt(OpenPath(covered), covered, false);
  }
  close(scratch);
  close(null_fd);
  for (const auto& entry : rw) close(entry.second);
  for (const auto& entry : dev) close(entry.second);
}

int g_child = 0;

void EndNamespace(int signal) {
  // The namespace ends with its init: every process in it is killed.
  _exit(128 + signal);
}

// The processes of this PID namespace (its own /proc), the init included.
std::size_t CountProcesses() {
  std::size_t count = 0;
  if (DIR* proc = opendir("/proc")) {
    while (const dirent* entry = readdir(proc)) count += std::isdigit(entry->d_name[0]) ? 1 : 0;
    closedir(proc);
  }
  return count;
}

// PID 1 of the namespace: reaps every orphan, ends with the program. Past
// `max_processes` (0: no cap) it ends the namespace: RLIMIT_NPROC does not
// hold for root, so the init counts (every 10 ms) where the kernel would not.
[[noreturn]] void RunInit(pid_t child, bool drop_caps, unsigned long long max_processes) {
  for (int fd = 3; fd < 1024; ++fd) close(fd);  // the program's pipes are its own
  struct sigaction action {};
  action.sa_handler = EndNamespace;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGTERM, SIGINT, SIGHUP}) sigaction(signal, &action, nullptr);
  if (drop_caps) DropCapabilities();
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);  // nothing in the namespace may ptrace its init
  for (;;) {
    int status = 0;
    const pid_t reaped = waitpid(-1, &status, max_processes > 0 ? WNOHANG : 0);
    if (reaped == child) _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    if (reaped < 0 && errno == ECHILD) _exit(kSetupFailed);
    if (reaped > 0 || max_processes == 0) continue;
    if (CountProcesses() > max_processes) {
      std::fprintf(stderr,
                   "opverify-sandbox: more than %llu processes: the sandbox's process limit; "
                   "every process in it was killed\n",
                   max_processes);
      std::fflush(stderr);
      _exit(128 + SIGKILL);  // the namespace ends with its init
    }
    usleep(10000);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = Parse(argc, argv);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) Fail("PR_SET_PDEATHSIG: " + Errno());
  if (args.parent != 0 && getppid() != args.parent) Fail("the parent process is gone");
  if (args.mounts) {
    if (args.scratch.empty()) Fail("--mounts needs --scratch");
    SetUpMounts(args);
  }
  for (const auto& [resource, value] : args.limits) {
    const rlimit limit{value, value};
    if (setrlimit(resource, &limit) != 0)
      Fail("setrlimit " + std::to_string(resource) + ": " + Errno());
    // A write past the file-size limit fails (EFBIG) instead of killing the writer.
    if (resource == RLIMIT_FSIZE) signal(SIGXFSZ, SIG_IGN);
  }
  if (args.init) {
    g_child = fork();
    if (g_child < 0) Fail("fork: " + Errno());
    if (g_child > 0) RunInit(g_child, args.drop_caps, args.max_processes);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) Fail("PR_SET_PDEATHSIG: " + Errno());
  }
  setsid();  // fails harmlessly where it already leads a session
  if (args.drop_caps) DropCapabilities();
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) Fail("PR_SET_NO_NEW_PRIVS: " + Errno());
  execvp(args.program[0], args.program.data());
  Fail(std::string("cannot run ") + args.program[0] + ": " + Errno());
}
