#include "runner/process/subprocess.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>
#include <thread>

#include "runner/common/strings.h"

namespace opverify {
namespace {

// posix_spawn's file actions and attributes, destroyed on every path out of Spawn.
class SpawnRequest {
 public:
  SpawnRequest() {
    posix_spawn_file_actions_init(&actions_);
    posix_spawnattr_init(&attributes_);
  }
  ~SpawnRequest() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attributes_);
  }
  SpawnRequest(const SpawnRequest&) = delete;
  SpawnRequest& operator=(const SpawnRequest&) = delete;

  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attributes_;
};

// Descriptors the parent opened for one spawn; the child has its own copies.
class OwnedFds {
 public:
  OwnedFds() = default;
  ~OwnedFds() {
    for (int fd : fds_) close(fd);
  }
  OwnedFds(const OwnedFds&) = delete;
  OwnedFds& operator=(const OwnedFds&) = delete;
  void Add(int fd) { fds_.push_back(fd); }

 private:
  std::vector<int> fds_;
};

std::string ErrnoText(int error) { return std::strerror(error); }

ExitStatus FromWaitStatus(int raw) {
  ExitStatus status;
  if (WIFEXITED(raw)) {
    status.exited = true;
    status.code = WEXITSTATUS(raw);
  } else if (WIFSIGNALED(raw)) {
    status.signal = WTERMSIG(raw);
    status.core_dumped = WCOREDUMP(raw);
  }
  return status;
}

std::string_view EnvName(std::string_view entry) { return entry.substr(0, entry.find('=')); }

// The child's environment: `environ` less env_unset and the names env_set
// replaces, then env_set. `storage` owns the added strings.
Status BuildEnvironment(const SpawnOptions& options, std::vector<std::string>* storage,
                        std::vector<char*>* envp) {
  for (const auto& setting : options.env_set) {
    const std::string& name = setting.first;
    if (name.empty() || name.find('=') != std::string::npos) {
      return Status::InvalidInput("spawn " + options.argv[0] + ": bad environment name '" + name +
                                  "'");
    }
    // A later setting of the same name wins.
    storage->erase(std::remove_if(storage->begin(), storage->end(),
                                  [&](const std::string& entry) { return EnvName(entry) == name; }),
                   storage->end());
    storage->push_back(name);
    storage->back().append("=").append(setting.second);
  }
  const auto replaced = [&](std::string_view name) {
    return std::find(options.env_unset.begin(), options.env_unset.end(), name) !=
               options.env_unset.end() ||
           std::any_of(options.env_set.begin(), options.env_set.end(),
                       [&](const auto& setting) { return setting.first == name; });
  };
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (!replaced(EnvName(*entry))) envp->push_back(*entry);
  }
  for (std::string& entry : *storage) envp->push_back(entry.data());
  envp->push_back(nullptr);
  return Status::Ok();
}

// Opens a file the child writes as stdout or stderr: close-on-exec in the
// parent; the child's dup of it is not.
Result<int> OpenOutput(const std::string& program, const std::string& path) {
  const int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::IoError("spawn " + program + ": cannot open " + path + ": " + ErrnoText(errno));
  return fd;
}

// The working directory, where one is given, exists and is a directory.
Status CheckWorkingDir(const SpawnOptions& options) {
  if (options.working_dir.empty()) return Status::Ok();
  const std::string& program = options.argv[0];
  struct stat info;
  if (stat(options.working_dir.c_str(), &info) != 0) {
    return Status::NotFound("spawn " + program + ": working directory " + options.working_dir +
                            ": " + ErrnoText(errno));
  }
  if (!S_ISDIR(info.st_mode)) {
    return Status::InvalidInput("spawn " + program + ": working directory " + options.working_dir +
                                " is not a directory");
  }
  return Status::Ok();
}

// The files stdout_path and stderr_path name, opened (owned by `owned`) and
// added to `mapping`; stderr "=stdout" is merged later, by the child.
Status OpenOutputs(const SpawnOptions& options, OwnedFds* owned,
                   std::vector<std::pair<int, int>>* mapping) {
  const std::string& program = options.argv[0];
  if (!options.stdout_path.empty()) {
    Result<int> fd = OpenOutput(program, options.stdout_path);
    if (!fd.ok()) return fd.status();
    owned->Add(fd.value());
    mapping->emplace_back(fd.value(), STDOUT_FILENO);
  }
  if (!options.stderr_path.empty() && options.stderr_path != "=stdout") {
    Result<int> fd = OpenOutput(program, options.stderr_path);
    if (!fd.ok()) return fd.status();
    owned->Add(fd.value());
    mapping->emplace_back(fd.value(), STDERR_FILENO);
  }
  return Status::Ok();
}

// Each target of `mapping` named once (stderr not at all when merged),
// no fd negative. Returns the first fd above every target.
Result<int> CheckMapping(const std::string& program,
                         const std::vector<std::pair<int, int>>& mapping, bool merge_stderr) {
  int above_targets = STDERR_FILENO + 1;
  for (std::size_t i = 0; i < mapping.size(); ++i) {
    const int parent_fd = mapping[i].first;
    const int child_fd = mapping[i].second;
    const bool taken =
        std::any_of(mapping.begin(), mapping.begin() + static_cast<std::ptrdiff_t>(i),
                    [&](const auto& other) { return other.second == child_fd; });
    if (parent_fd < 0 || child_fd < 0 || taken || (merge_stderr && child_fd == STDERR_FILENO)) {
      return Status::InvalidInput(Printf("spawn %s: bad or repeated fd mapping %d -> %d",
                                         program.c_str(), parent_fd, child_fd));
    }
    above_targets = std::max(above_targets, child_fd + 1);
  }
  return above_targets;
}

// Each source is parked above every target first: a dup2 into one target
// then never clobbers a source still to come (a swap 3 <-> 4), and a source
// numbered like its own target still loses close-on-exec in the child.
Status ParkSources(const std::string& program, const std::vector<std::pair<int, int>>& mapping,
                   int above_targets, OwnedFds* owned, SpawnRequest* request) {
  for (const auto& [parent_fd, child_fd] : mapping) {
    const int parked = fcntl(parent_fd, F_DUPFD_CLOEXEC, above_targets);
    if (parked < 0) {
      return Status::InvalidInput(Printf("spawn %s: fd %d for the child's fd %d: %s",
                                         program.c_str(), parent_fd, child_fd,
                                         ErrnoText(errno).c_str()));
    }
    owned->Add(parked);
    if (const int error = posix_spawn_file_actions_adddup2(&request->actions_, parked, child_fd)) {
      return Status::Internal("spawn " + program +
                              ": posix_spawn_file_actions_adddup2: " + ErrnoText(error));
    }
  }
  return Status::Ok();
}

// Only what `mapping` names crosses: the rank's log, Open MPI's sockets and
// any descriptor a library opened without close-on-exec stay ours. Then
// stderr merged into stdout and the working directory, where asked.
// Returns 0 or an error number.
int CloseTheRest(const SpawnOptions& options, const std::vector<std::pair<int, int>>& mapping,
                 int above_targets, bool merge_stderr, SpawnRequest* request) {
  int error = 0;
  for (int fd = STDERR_FILENO + 1; fd < above_targets && error == 0; ++fd) {
    const bool target = std::any_of(mapping.begin(), mapping.end(),
                                    [&](const auto& pair) { return pair.second == fd; });
    if (!target) error = posix_spawn_file_actions_addclose(&request->actions_, fd);
  }
  if (error == 0)
    error = posix_spawn_file_actions_addclosefrom_np(&request->actions_, above_targets);
  if (error == 0 && merge_stderr) {
    error = posix_spawn_file_actions_adddup2(&request->actions_, STDOUT_FILENO, STDERR_FILENO);
  }
  if (error == 0 && !options.working_dir.empty()) {
    error = posix_spawn_file_actions_addchdir_np(&request->actions_, options.working_dir.c_str());
  }
  return error;
}

// The child's session or process group, no blocked signals, and the
// signals a run handles back at their defaults. Returns 0 or an error number.
int SetAttributes(const SpawnOptions& options, SpawnRequest* request) {
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (options.new_session) {
    flags |= POSIX_SPAWN_SETSID;  // a session leader leads its own group too
  } else if (options.new_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  sigset_t no_signals;
  sigemptyset(&no_signals);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int signal : {SIGTERM, SIGINT, SIGPIPE, SIGCHLD, SIGHUP, SIGQUIT}) {
    sigaddset(&defaults, signal);
  }
  int error = posix_spawnattr_setflags(&request->attributes_, flags);
  if (error == 0) error = posix_spawnattr_setpgroup(&request->attributes_, 0);
  if (error == 0) error = posix_spawnattr_setsigmask(&request->attributes_, &no_signals);
  if (error == 0) error = posix_spawnattr_setsigdefault(&request->attributes_, &defaults);
  return error;
}

}  // namespace

std::string ExitStatus::Describe() const {
  if (exited) return Printf("exit code %d", code);
  if (signal == 0) return "unknown status (reaped elsewhere)";
  return Printf("signal %s (%d)%s", SignalName(signal).c_str(), signal,
                core_dumped ? " (core dumped)" : "");
}

std::string SignalName(int signal) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  if (const char* abbreviation = sigabbrev_np(signal)) return std::string("SIG") + abbreviation;
#else
  static constexpr std::pair<int, const char*> kNames[] = {
      {SIGHUP, "SIGHUP"},       {SIGINT, "SIGINT"},       {SIGQUIT, "SIGQUIT"},
      {SIGILL, "SIGILL"},       {SIGTRAP, "SIGTRAP"},     {SIGABRT, "SIGABRT"},
      {SIGBUS, "SIGBUS"},       {SIGFPE, "SIGFPE"},       {SIGKILL, "SIGKILL"},
      {SIGUSR1, "SIGUSR1"},     {SIGSEGV, "SIGSEGV"},     {SIGUSR2, "SIGUSR2"},
      {SIGPIPE, "SIGPIPE"},     {SIGALRM, "SIGALRM"},     {SIGTERM, "SIGTERM"},
      {SIGSTKFLT, "SIGSTKFLT"}, {SIGCHLD, "SIGCHLD"},     {SIGCONT, "SIGCONT"},
      {SIGSTOP, "SIGSTOP"},     {SIGTSTP, "SIGTSTP"},     {SIGTTIN, "SIGTTIN"},
      {SIGTTOU, "SIGTTOU"},     {SIGURG, "SIGURG"},       {SIGXCPU, "SIGXCPU"},
      {SIGXFSZ, "SIGXFSZ"},     {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"},
      {SIGWINCH, "SIGWINCH"},   {SIGIO, "SIGIO"},         {SIGPWR, "SIGPWR"},
      {SIGSYS, "SIGSYS"},
  };
  for (const auto& [number, name] : kNames) {
    if (number == signal) return name;
  }
#endif
  if (signal >= SIGRTMIN && signal <= SIGRTMAX) return Printf("SIGRTMIN+%d", signal - SIGRTMIN);
  return "unknown";
}

Result<Subprocess> Subprocess::Spawn(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return Status::InvalidInput("spawn: no program given (argv is empty)");
  }
  const std::string& program = options.argv[0];
  if (Status checked = CheckWorkingDir(options); !checked.ok()) return checked;
  OwnedFds owned;
  std::vector<std::pair<int, int>> mapping = options.fds;  // {parent fd, child fd}
  if (Status opened = OpenOutputs(options, &owned, &mapping); !opened.ok()) return opened;
  const bool merge_stderr = options.stderr_path == "=stdout";
  Result<int> above_targets = CheckMapping(program, mapping, merge_stderr);
  if (!above_targets.ok()) return above_targets.status();

  SpawnRequest request;
  if (Status parked = ParkSources(program, mapping, above_targets.value(), &owned, &request);
      !parked.ok())
    return parked;
  int error = CloseTheRest(options, mapping, above_targets.value(), merge_stderr, &request);
  if (error == 0) error = SetAttributes(options, &request);
  if (error != 0) return Status::Internal("spawn " + program + ": preparing: " + ErrnoText(error));

  std::vector<std::string> env_storage;
  std::vector<char*> envp;
  if (Status built = BuildEnvironment(options, &env_storage, &envp); !built.ok()) return built;
  std::vector<char*> argv;
  for (const std::string& arg : options.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);

  // glibc's posix_spawn reports a failed exec as its result, not as exit 127.
  pid_t pid = -1;
  error = posix_spawnp(&pid, program.c_str(), &request.actions_, &request.attributes_, argv.data(),
                       envp.data());
  if (error != 0) {
    std::string message = "cannot start " + program + ": " + ErrnoText(error);
    if (!options.working_dir.empty()) message += " (working directory " + options.working_dir + ")";
    return error == ENOENT ? Status::NotFound(message) : Status::IoError(message);
  }
  return Subprocess(pid, options.new_process_group || options.new_session);
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      group_(other.group_),
      status_(std::exchange(other.status_, std::nullopt)) {}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    KillAndReap();
    pid_ = std::exchange(other.pid_, -1);
    group_ = other.group_;
    status_ = std::exchange(other.status_, std::nullopt);
  }
  return *this;
}

Subprocess::~Subprocess() { KillAndReap(); }

std::optional<ExitStatus> Subprocess::Wait(std::optional<double> timeout_s) {
  if (status_ || pid_ <= 0) return status_;
  using Clock = std::chrono::steady_clock;
  // Polled, not blocking: a waitpid cannot time out. Capped at a year so the
  // deadline cannot overflow.
  const double limit_s = std::clamp(timeout_s.value_or(0.0), 0.0, 3.2e7);
  const Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                        std::chrono::duration<double>(limit_s));
  Clock::duration pause = std::chrono::microseconds(500);
  for (;;) {
    int raw = 0;
    const pid_t reaped = waitpid(pid_, &raw, timeout_s ? WNOHANG : 0);
    if (reaped == pid_) {
      status_ = FromWaitStatus(raw);
      return status_;
    }
    if (reaped < 0 && errno == EINTR) continue;
    if (reaped < 0) {  // ECHILD: reaped by someone else (SIGCHLD ignored?); its status is lost
      status_ = ExitStatus{};
      return status_;
    }
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::min(pause, deadline - now));
    pause = std::min<Clock::duration>(pause * 2, std::chrono::milliseconds(10));
  }
}

ExitStatus Subprocess::Terminate(double grace_s) {
  if (running()) {
    Signal(SIGTERM);
    if (!Wait(grace_s)) {
      Signal(SIGKILL);
      Wait();
    }
    KillGroupLeftovers();
  }
  return status_.value_or(ExitStatus{});
}

void Subprocess::Signal(int signal) const {
  if (pid_ <= 0) return;
  if (group_ && kill(-pid_, signal) == 0) return;
  // Not in its group any more (it called setsid), or only the unreaped leader is left.
  kill(pid_, signal);
}

// Right after the leader is reaped its group id is still ours while any member
// lives: the leader's pid cannot be reused until the group is empty.
void Subprocess::KillGroupLeftovers() const {
  if (group_ && pid_ > 0) kill(-pid_, SIGKILL);  // ESRCH: nothing left
}

void Subprocess::KillAndReap() {
  if (!running()) return;
  Signal(SIGKILL);
  Wait();
  KillGroupLeftovers();
}

Result<CapturedRun> RunAndCapture(SpawnOptions options, double timeout_s, double grace_s,
                                  std::size_t max_output_bytes) {
  const std::string program = options.argv.empty() ? std::string("(no program)") : options.argv[0];
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Status::IoError("run " + program + ": pipe: " + ErrnoText(errno));
  }
  const int read_fd = pipe_fds[0];
  Result<Subprocess> spawned = Status::Internal("run " + program + ": not started");
  {
    OwnedFds parent_copies;  // the child's ends: closed here once it has its own
    parent_copies.Add(pipe_fds[1]);
    const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd < 0) {
      close(read_fd);
      return Status::IoError("run " + program + ": /dev/null: " + ErrnoText(errno));
    }
    parent_copies.Add(null_fd);
    options.stdout_path.clear();
    options.stderr_path.clear();
    options.fds = {{null_fd, STDIN_FILENO}, {pipe_fds[1], STDOUT_FILENO}, {pipe_fds[1], STDERR_FILENO}};
    spawned = Subprocess::Spawn(options);
  }
  if (!spawned.ok()) {
    close(read_fd);
    return spawned.status();
  }
  Subprocess& child = spawned.value();
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  CapturedRun run;
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      run.timed_out = true;
      break;
    }
    pollfd readable{read_fd, POLLIN, 0};
    const int ready = poll(&readable, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t got = read(read_fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // end of output: every writer has closed it
    const std::size_t room = max_output_bytes - std::min(max_output_bytes, run.output.size());
    run.output.append(buffer, std::min(static_cast<std::size_t>(got), room));
  }
  close(read_fd);
  if (!run.timed_out) {
    const double left_s = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (std::optional<ExitStatus> status = child.Wait(std::max(left_s, 0.0))) {
      run.status = *status;
      return run;
    }
    run.timed_out = true;
  }
  run.status = child.Terminate(grace_s);
  return run;
}

std::vector<pid_t> Descendants(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return {};
  while (const dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || pid <= 0) continue;
    std::ifstream stat(std::string("/proc/") + entry->d_name + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;  // gone meanwhile
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so after the last ')'.
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    std::string state;
    long ppid = 0;
    if (rest >> state >> ppid) children[static_cast<pid_t>(ppid)].push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  std::vector<pid_t> out;
  std::vector<pid_t> queue{root};
  while (!queue.empty()) {
    const pid_t parent = queue.back();
    queue.pop_back();
    for (const pid_t child : children[parent]) {
      if (std::find(out.begin(), out.end(), child) != out.end()) continue;
      out.push_back(child);
      queue.push_back(child);
    }
  }
  return out;
}

}  // namespace opverify
