// Child processes: real programs (/bin/sh scripts, sleep, cat) started,
// waited for, signalled and killed with their whole process group, and the
// files, environment, directory and descriptors they start with.
#include "runner/process/subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>  // setenv (POSIX)
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runner/process/channel.h"
#include "tests/support/scratch_dir_test.h"
#include "tests/support/seconds_since.h"

namespace opverify {
namespace {

using Clock = std::chrono::steady_clock;

using testing::SecondsSince;

SpawnOptions Shell(const std::string& script) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", script};
  return options;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Everything written to `fd` until every writer has closed it, or what came
// within timeout_s.
std::string ReadToEnd(int fd, double timeout_s) {
  std::string out;
  const Clock::time_point start = Clock::now();
  char buffer[4096];
  while (SecondsSince(start) < timeout_s) {
    pollfd ready{fd, POLLIN, 0};
    if (poll(&ready, 1, 50) <= 0) continue;
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

// Gone, or a zombie that this sandbox's init may never reap: either way dead.
bool ProcessEnds(pid_t pid, double timeout_s) {
  const Clock::time_point start = Clock::now();
  do {
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
    const std::size_t name_end = stat.rfind(')');
    if (name_end != std::string::npos && stat.compare(name_end, 3, ") Z") == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (SecondsSince(start) < timeout_s);
  return false;
}

class SubprocessTest : public testing::ScratchDirTest {
 protected:
  // A script that reports on fd 3 (a pipe here) once it is ready, and the
  // pipe's read end: the test reads the report before acting.
  Subprocess SpawnReporting(SpawnOptions options) {
    Result<Pipe> pipe = MakePipe();
    EXPECT_TRUE(pipe.ok());
    report_fd_ = pipe->read_fd;
    options.fds.emplace_back(pipe->write_fd, 3);
    Result<Subprocess> process = Subprocess::Spawn(options);
    CloseFd(&pipe->write_fd);
    EXPECT_TRUE(process.ok()) << process.status().ToString();
    return std::move(process).value();
  }
  std::string Report() {
    std::string report = ReadToEnd(report_fd_, 5.0);
    CloseFd(&report_fd_);
    return report;
  }

  int report_fd_ = -1;
};

TEST_F(SubprocessTest, ExitCodeIsReported) {
  Result<Subprocess> failing = Subprocess::Spawn(Shell("exit 3"));
  ASSERT_TRUE(failing.ok()) << failing.status().ToString();
  std::optional<ExitStatus> status = failing->Wait();
  ASSERT_TRUE(status);
  EXPECT_TRUE(status->exited);
  EXPECT_EQ(status->code, 3);
  EXPECT_FALSE(status->success());
  EXPECT_EQ(status->Describe(), "exit code 3");
  EXPECT_FALSE(failing->running());

  Result<Subprocess> passing = Subprocess::Spawn(Shell("exit 0"));
  ASSERT_TRUE(passing.ok());
  EXPECT_TRUE(passing->Wait(10.0)->success());
  EXPECT_TRUE(passing->Wait(0.0)->success());  // cached
}

TEST_F(SubprocessTest, ProgramWithoutSlashIsSearchedInPath) {
  SpawnOptions options;
  options.argv = {"sh", "-c", "exit 4"};
  Result<Subprocess> process = Subprocess::Spawn(options);
  ASSERT_TRUE(process.ok()) << process.status().ToString();
  EXPECT_EQ(process->Wait()->code, 4);
}

TEST_F(SubprocessTest, DeathBySignalIsReported) {
  Result<Subprocess> process = Subprocess::Spawn(Shell("ulimit -c 0; kill -SEGV $$"));
  ASSERT_TRUE(process.ok());
  std::optional<ExitStatus> status = process->Wait();
  ASSERT_TRUE(status);
  EXPECT_FALSE(status->exited);
  EXPECT_EQ(status->signal, SIGSEGV);
  EXPECT_FALSE(status->core_dumped);
  EXPECT_EQ(status->Describe(), "signal SIGSEGV (11)");
}

TEST(ExitStatusTest, DescribeSaysWhenCoreWasDumped) {
  ExitStatus status;
  status.signal = SIGABRT;
  status.core_dumped = true;
  EXPECT_EQ(status.Describe(), "signal SIGABRT (6) (core dumped)");
  EXPECT_EQ(ExitStatus{}.Describe(), "unknown status (reaped elsewhere)");
}

TEST(SignalNameTest, NamesLinuxSignals) {
  EXPECT_EQ(SignalName(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(SignalName(SIGKILL), "SIGKILL");
  EXPECT_EQ(SignalName(SIGTERM), "SIGTERM");
  EXPECT_EQ(SignalName(SIGCHLD), "SIGCHLD");
  EXPECT_EQ(SignalName(SIGSYS), "SIGSYS");
  EXPECT_EQ(SignalName(SIGRTMIN + 2), "SIGRTMIN+2");
  EXPECT_EQ(SignalName(0), "unknown");
  EXPECT_EQ(SignalName(1000), "unknown");
}

TEST_F(SubprocessTest, WaitReturnsNothingAfterTimeoutAndTerminateEndsIt) {
  SpawnOptions options;
  options.argv = {"sleep", "30"};
  Result<Subprocess> process = Subprocess::Spawn(options);
  ASSERT_TRUE(process.ok());

  Clock::time_point start = Clock::now();
  EXPECT_FALSE(process->Wait(0.2));
  EXPECT_GE(SecondsSince(start), 0.2);
  EXPECT_LT(SecondsSince(start), 1.5);
  start = Clock::now();
  EXPECT_FALSE(process->Wait(0.0));
  EXPECT_LT(SecondsSince(start), 0.5);
  EXPECT_TRUE(process->running());

  start = Clock::now();
  const ExitStatus status = process->Terminate(2.0);
  EXPECT_LT(SecondsSince(start), 3.0);
  EXPECT_EQ(status.signal, SIGTERM) << status.Describe();
  EXPECT_FALSE(process->running());
  EXPECT_TRUE(ProcessEnds(process->pid(), 0.0));
}

TEST_F(SubprocessTest, TerminateEscalatesToSigkillWhenSigtermIsIgnored) {
  Subprocess process = SpawnReporting(Shell("trap '' TERM; echo ready >&3; exec 3>&-; sleep 30"));
  ASSERT_EQ(Report(), "ready\n");

  const Clock::time_point start = Clock::now();
  const ExitStatus status = process.Terminate(0.3);
  EXPECT_GE(SecondsSince(start), 0.3);
  EXPECT_LT(SecondsSince(start), 1.3);
  EXPECT_EQ(status.signal, SIGKILL) << status.Describe();
}

TEST_F(SubprocessTest, TerminateKillsGrandchildrenLeftInTheGroup) {
  // The leader dies of SIGTERM at once; its child ignores SIGTERM and is
  // killed only by the SIGKILL to the group after the leader was reaped.
  Subprocess process = SpawnReporting(
      Shell(R"(sh -c 'trap "" TERM; echo $$ >&3; exec 3>&-; exec sleep 100' & exec 3>&-; wait)"));
  const pid_t grandchild = std::atoi(Report().c_str());
  ASSERT_GT(grandchild, 0);

  const ExitStatus status = process.Terminate(5.0);
  EXPECT_EQ(status.signal, SIGTERM) << status.Describe();
  EXPECT_TRUE(ProcessEnds(grandchild, 2.0));
}

TEST_F(SubprocessTest, DestructorKillsTheWholeGroup) {
  pid_t leader = -1;
  pid_t grandchild = -1;
  {
    Subprocess process = SpawnReporting(Shell("sleep 100 3>&- & echo $! >&3; exec 3>&-; wait"));
    leader = process.pid();
    grandchild = std::atoi(Report().c_str());
    ASSERT_GT(grandchild, 0);
    EXPECT_TRUE(process.running());
  }
  EXPECT_TRUE(ProcessEnds(leader, 0.0));
  EXPECT_TRUE(ProcessEnds(grandchild, 2.0));
}

TEST_F(SubprocessTest, ChildLeadsItsOwnGroupUnlessAskedNotTo) {
  SpawnOptions options;
  options.argv = {"sleep", "30"};
  Result<Subprocess> leader = Subprocess::Spawn(options);
  ASSERT_TRUE(leader.ok());
  EXPECT_EQ(getpgid(leader->pid()), leader->pid());

  options.new_process_group = false;
  Result<Subprocess> member = Subprocess::Spawn(options);
  ASSERT_TRUE(member.ok());
  EXPECT_EQ(getpgid(member->pid()), getpgrp());
  EXPECT_EQ(member->Terminate(2.0).signal, SIGTERM);
}

TEST_F(SubprocessTest, MovesTransferOwnership) {
  SpawnOptions options;
  options.argv = {"sleep", "30"};
  Result<Subprocess> spawned = Subprocess::Spawn(options);
  ASSERT_TRUE(spawned.ok());
  const pid_t first_pid = spawned->pid();

  Subprocess owner(std::move(spawned).value());
  EXPECT_EQ(owner.pid(), first_pid);
  EXPECT_TRUE(owner.running());

  Result<Subprocess> second = Subprocess::Spawn(Shell("exit 5"));
  ASSERT_TRUE(second.ok());
  Subprocess other(std::move(second).value());
  const pid_t second_pid = other.pid();
  owner = std::move(other);  // kills and reaps the sleep
  EXPECT_TRUE(ProcessEnds(first_pid, 0.0));
  // NOLINTBEGIN(bugprone-use-after-move): the moved-from state is part of the contract.
  EXPECT_EQ(other.pid(), -1);
  EXPECT_FALSE(other.running());
  EXPECT_FALSE(other.Wait(0.0));
  // NOLINTEND(bugprone-use-after-move)
  EXPECT_EQ(owner.pid(), second_pid);
  EXPECT_EQ(owner.Wait()->code, 5);
}

TEST_F(SubprocessTest, RedirectsStdoutAndStderrToTruncatedFiles) {
  const std::string out = dir_ + "/out.txt";
  const std::string err = dir_ + "/err.txt";
  std::ofstream(out) << "old content, longer than the new\n";
  SpawnOptions options = Shell("echo out; echo err >&2");
  options.stdout_path = out;
  options.stderr_path = err;
  Result<Subprocess> process = Subprocess::Spawn(options);
  ASSERT_TRUE(process.ok()) << process.status().ToString();
  EXPECT_TRUE(process->Wait()->success());
  EXPECT_EQ(ReadFile(out), "out\n");
  EXPECT_EQ(ReadFile(err), "err\n");
}

TEST_F(SubprocessTest, MergesStderrIntoStdout) {
  const std::string out = dir_ + "/merged.txt";
  SpawnOptions options = Shell("echo a; echo b >&2; echo c");
  options.stdout_path = out;
  options.stderr_path = "=stdout";
  Result<Subprocess> process = Subprocess::Spawn(options);
  ASSERT_TRUE(process.ok());
  EXPECT_TRUE(process->Wait()->success());
  EXPECT_EQ(ReadFile(out), "a\nb\nc\n");
}

TEST_F(SubprocessTest, UnwritableOutputFileIsAnError) {
  SpawnOptions options = Shell("exit 0");
  options.stdout_path = dir_ + "/missing/out.txt";
  Result<Subprocess> process = Subprocess::Spawn(options);
  ASSERT_FALSE(process.ok());
  EXPECT_NE(process.status().message().find(dir_ + "/missing/out.txt"), std::string::npos)
      << process.status().message();
}

TEST_F(SubprocessTest, ChildSeesEnvironmentChanges) {
  setenv("OPVERIFY_TEST_KEPT", "kept", 1);
  setenv("OPVERIFY_TEST_GONE", "gone", 1);
  setenv("OPVERIFY_TEST_REPLACED", "old", 1);
  const std::string out = dir_ + "/env.txt";
  SpawnOptions options = Shell(
      "echo \"$OPVERIFY_TEST_KEPT ${OPVERIFY_TEST_GONE-unset} $OPVERIFY_TEST_REPLACED "
      "$OPVERIFY_TEST_NEW\"; env | grep -c '^OPVERIFY_TEST_REPLACED='");
  options.env_set = {{"OPVERIFY_TEST_NEW", "first"},
                     {"OPVERIFY_TEST_REPLACED", "new"},
                     {"OPVERIFY_TEST_NEW", "second"}};
  options.env_unset = {"OPVERIFY_TEST_GONE"};
  options.stdout_path = out;
  Result<Subprocess> process = Subprocess::Spawn(options);
  unsetenv("OPVERIFY_TEST_KEPT");
  unsetenv("OPVERIFY_TEST_GONE");
  unsetenv("OPVERIFY_TEST_REPLACED");
  ASSERT_TRUE(process.ok());
  EXPECT_TRUE(process->Wait()->success());
  EXPECT_EQ(ReadFile(out), "kept unset new second\n1\n");
}

TEST_F(SubprocessTest, RunsInWorkingDirectory) {
  const std::string out = dir_ + "/pwd.txt";
  SpawnOptions options = Shell("pwd -P");
  options.working_dir = dir_;
  options.stdout_path = out;
  Result<Subprocess> process = Subprocess::Spawn(options);
  ASSERT_TRUE(process.ok());
  EXPECT_TRUE(process->Wait()->success());
  EXPECT_EQ(ReadFile(out), std::filesystem::canonical(dir_).string() + "\n");

  options.working_dir = dir_ + "/no-such-dir";
  Result<Subprocess> missing = Subprocess::Spawn(options);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_NE(missing.status().message().find(options.working_dir), std::string::npos);
}

TEST_F(SubprocessTest, MapsParentFdIntoChild) {
  Result<Pipe> pipe = MakePipe();
  ASSERT_TRUE(pipe.ok());
  SpawnOptions options = Shell("echo hello >&3");
  options.fds = {{pipe->write_fd, 3}};
  Result<Subprocess> process = Subprocess::Spawn(options);
  CloseFd(&pipe->write_fd);
  ASSERT_TRUE(process.ok()) << process.status().ToString();
  EXPECT_EQ(ReadToEnd(pipe->read_fd, 5.0), "hello\n");
  EXPECT_TRUE(process->Wait()->success());
  CloseFd(&pipe->read_fd);
}

TEST_F(SubprocessTest, MapsFdsWhoseNumbersCollide) {
  // Parent fds 50 and 51 swap places in the child, and 52 keeps its number
  // though it is close-on-exec in the parent. (bash: dash takes fds 0-9 only.)
  Result<Pipe> pipes[3] = {MakePipe(), MakePipe(), MakePipe()};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(pipes[i].ok());
    ASSERT_EQ(fcntl(50 + i, F_GETFD), -1) << "fd " << 50 + i << " is in use";
    ASSERT_EQ(dup3(pipes[i]->write_fd, 50 + i, O_CLOEXEC), 50 + i);
    CloseFd(&pipes[i]->write_fd);
    pipes[i]->write_fd = 50 + i;
  }
  SpawnOptions options;
  options.argv = {"/bin/bash", "-c", "echo to51 >&51; echo to50 >&50; echo to52 >&52"};
  options.fds = {{50, 51}, {51, 50}, {52, 52}};
  Result<Subprocess> process = Subprocess::Spawn(options);
  for (Result<Pipe>& pipe : pipes) CloseFd(&pipe->write_fd);
  ASSERT_TRUE(process.ok()) << process.status().ToString();
  EXPECT_EQ(ReadToEnd(pipes[0]->read_fd, 5.0), "to51\n");
  EXPECT_EQ(ReadToEnd(pipes[1]->read_fd, 5.0), "to50\n");
  EXPECT_EQ(ReadToEnd(pipes[2]->read_fd, 5.0), "to52\n");
  EXPECT_TRUE(process->Wait()->success());
  for (Result<Pipe>& pipe : pipes) CloseFd(&pipe->read_fd);
}

TEST_F(SubprocessTest, OnlyTheMappedDescriptorsReachTheChild) {
  // Inherited descriptors (an MPI rank's sockets, its log) never cross: fds 8
  // (below the mapped one) and 70 (above) are open without close-on-exec
  // here, only 9 is mapped.
  Result<Pipe> pipe = MakePipe();
  ASSERT_TRUE(pipe.ok());
  for (int fd : {8, 9, 70}) ASSERT_EQ(fcntl(fd, F_GETFD), -1) << "fd " << fd << " is in use";
  ASSERT_EQ(dup2(pipe->write_fd, 8), 8);
  ASSERT_EQ(dup2(pipe->write_fd, 70), 70);
  SpawnOptions options;
  options.argv = {"/bin/bash", "-c", "ls /proc/self/fd >&9"};
  options.fds = {{pipe->write_fd, 9}};
  Result<Subprocess> process = Subprocess::Spawn(options);
  close(8);
  close(70);
  CloseFd(&pipe->write_fd);
  ASSERT_TRUE(process.ok()) << process.status().ToString();
  std::string listed = ReadToEnd(pipe->read_fd, 5.0);
  EXPECT_TRUE(process->Wait()->success());
  CloseFd(&pipe->read_fd);
  std::istringstream fds(listed);
  std::vector<int> open;
  for (int fd = 0; fds >> fd;) open.push_back(fd);
  // 0-2 (the test's own), 9, and the folder ls reads (the lowest free number).
  EXPECT_EQ(open, (std::vector<int>{0, 1, 2, 3, 9})) << listed;
}

TEST_F(SubprocessTest, BadFdMappingIsAnError) {
  SpawnOptions options = Shell("exit 0");
  options.fds = {{0, 3}, {1, 3}};
  Result<Subprocess> repeated = Subprocess::Spawn(options);
  ASSERT_FALSE(repeated.ok());
  EXPECT_EQ(repeated.status().code(), Status::Code::kInvalidInput);

  ASSERT_EQ(fcntl(99, F_GETFD), -1);
  options.fds = {{99, 3}};
  Result<Subprocess> closed = Subprocess::Spawn(options);
  ASSERT_FALSE(closed.ok());
  EXPECT_NE(closed.status().message().find("fd 99"), std::string::npos)
      << closed.status().message();
}

TEST_F(SubprocessTest, MissingProgramIsAnErrorNamingIt) {
  SpawnOptions options;
  options.argv = {"/nonexistent/opverify-no-such-program"};
  Result<Subprocess> by_path = Subprocess::Spawn(options);
  ASSERT_FALSE(by_path.ok());
  EXPECT_EQ(by_path.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(by_path.status().message(),
            "cannot start /nonexistent/opverify-no-such-program: No such file or directory");

  options.argv = {"opverify-no-such-program"};
  Result<Subprocess> by_name = Subprocess::Spawn(options);
  ASSERT_FALSE(by_name.ok());
  EXPECT_NE(by_name.status().message().find("opverify-no-such-program"), std::string::npos);

  options.argv.clear();
  EXPECT_EQ(Subprocess::Spawn(options).status().code(), Status::Code::kInvalidInput);
}

TEST_F(SubprocessTest, NonExecutableProgramIsAnError) {
  const std::string script = dir_ + "/not-executable.sh";
  std::ofstream(script) << "#!/bin/sh\nexit 0\n";
  ASSERT_EQ(chmod(script.c_str(), 0644), 0);
  SpawnOptions options;
  options.argv = {script};
  Result<Subprocess> process = Subprocess::Spawn(options);
  ASSERT_FALSE(process.ok());
  EXPECT_EQ(process.status().message(), "cannot start " + script + ": Permission denied");
}

// The bits of one "SigXxx:" line of /proc/<pid>/status.
unsigned long long SignalBits(const std::string& status, const std::string& field) {
  const std::size_t at = status.find("\n" + field + ":");
  if (at == std::string::npos) return ~0ull;
  return std::strtoull(status.c_str() + at + field.size() + 2, nullptr, 16);
}

TEST_F(SubprocessTest, ChildStartsWithDefaultSignalsWhateverTheParentSet) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction saved[3];
  const int ignored[3] = {SIGTERM, SIGINT, SIGPIPE};
  for (int i = 0; i < 3; ++i) sigaction(ignored[i], &ignore, &saved[i]);
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGUSR1);
  sigset_t saved_mask;
  pthread_sigmask(SIG_BLOCK, &blocked, &saved_mask);

  const std::string out = dir_ + "/status.txt";
  SpawnOptions options;
  options.argv = {"cat", "/proc/self/status"};
  options.stdout_path = out;
  Result<Subprocess> process = Subprocess::Spawn(options);

  pthread_sigmask(SIG_SETMASK, &saved_mask, nullptr);
  for (int i = 0; i < 3; ++i) sigaction(ignored[i], &saved[i], nullptr);
  ASSERT_TRUE(process.ok());
  ASSERT_TRUE(process->Wait()->success());
  const std::string status = ReadFile(out);
  EXPECT_EQ(SignalBits(status, "SigBlk"), 0u) << status;
  const unsigned long long ignored_bits = SignalBits(status, "SigIgn");
  for (int signal : ignored) EXPECT_EQ(ignored_bits & (1ull << (signal - 1)), 0u) << signal;
}

TEST(RunAndCapture, CollectsStdoutAndStderrAndTheExitCode) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"};
  Result<CapturedRun> run = RunAndCapture(options, 10.0, 1.0, 1024);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_FALSE(run.value().timed_out);
  EXPECT_TRUE(run.value().status.exited);
  EXPECT_EQ(run.value().status.code, 3);
  EXPECT_EQ(run.value().output, "out\nerr\n");
}

TEST(RunAndCapture, StdinIsEmptySoAReaderDoesNotWait) {
  SpawnOptions options;
  options.argv = {"cat"};
  Result<CapturedRun> run = RunAndCapture(options, 10.0, 1.0, 1024);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_TRUE(run.value().status.success());
  EXPECT_EQ(run.value().output, "");
}

TEST(RunAndCapture, OutputPastTheCapIsDroppedAndTheProgramStillEnds) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x"};
  Result<CapturedRun> run = RunAndCapture(options, 10.0, 1.0, 100);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_TRUE(run.value().status.success());
  EXPECT_EQ(run.value().output, std::string(100, 'x'));
}

TEST(RunAndCapture, AProgramPastItsTimeoutIsKilledWithItsGroup) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "sleep 30 & sleep 30"};
  const Clock::time_point start = Clock::now();
  Result<CapturedRun> run = RunAndCapture(options, 0.3, 0.5, 1024);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_TRUE(run.value().timed_out);
  EXPECT_FALSE(run.value().status.exited);
  EXPECT_LT(SecondsSince(start), 5.0);
}

TEST(RunAndCapture, AMissingProgramIsNotFound) {
  SpawnOptions options;
  options.argv = {"opverify-no-such-program"};
  Result<CapturedRun> run = RunAndCapture(options, 1.0, 1.0, 1024);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace opverify
