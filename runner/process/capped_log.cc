#include "runner/process/capped_log.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "runner/common/strings.h"

namespace opverify {
namespace {

constexpr std::size_t kTailBytes = 4000;
// Room kept below the cap for the markers, so that they always fit.
constexpr std::uint64_t kMarkerRoom = 512;

std::uint64_t FileSize(int fd) {
  struct stat info {};
  return fstat(fd, &info) == 0 ? static_cast<std::uint64_t>(info.st_size) : 0;
}

void WriteAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a full disk: the rest is lost, the child is not stopped for it
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

}  // namespace

Result<std::unique_ptr<CappedLog>> CappedLog::Open(const std::string& path, std::uint64_t cap_bytes,
                                                   const std::string& banner) {
  const int log_fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status::IoError("opening the log " + path + ": " + std::strerror(errno));
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    close(log_fd);
    return Status::IoError(std::string("pipe for the log: ") + std::strerror(errno));
  }
  const int stop_fd = eventfd(0, EFD_CLOEXEC);
  if (stop_fd < 0) {
    close(log_fd);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return Status::IoError(std::string("eventfd for the log: ") + std::strerror(errno));
  }
  std::unique_ptr<CappedLog> log(
      new CappedLog(log_fd, pipe_fds[0], pipe_fds[1], stop_fd, cap_bytes));
  if (FileSize(log_fd) + banner.size() + kMarkerRoom <= cap_bytes)
    WriteAll(log_fd, banner.data(), banner.size());
  log->thread_ = std::thread([raw = log.get()] { raw->Drain(); });
  return log;
}

CappedLog::CappedLog(int log_fd, int read_fd, int write_fd, int stop_fd, std::uint64_t cap_bytes)
    : log_fd_(log_fd),
      read_fd_(read_fd),
      write_fd_(write_fd),
      stop_fd_(stop_fd),
      cap_bytes_(cap_bytes) {}

CappedLog::~CappedLog() {
  Finish(0);
  close(log_fd_);
  close(read_fd_);
  close(stop_fd_);
}

void CappedLog::CloseWriteEnd() {
  if (write_fd_ >= 0) close(write_fd_);
  write_fd_ = -1;
}

void CappedLog::Write(const char* data, std::size_t size) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tail_.append(data + (size > kTailBytes ? size - kTailBytes : 0), std::min(size, kTailBytes));
    if (tail_.size() > kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
  }
  if (cut_) {
    dropped_ += size;
    return;
  }
  // Looked up on every write: the A/B's executors append to the same log.
  const std::uint64_t used = FileSize(log_fd_);
  const std::uint64_t room = cap_bytes_ > used + kMarkerRoom ? cap_bytes_ - used - kMarkerRoom : 0;
  const std::size_t kept = static_cast<std::size_t>(std::min<std::uint64_t>(room, size));
  WriteAll(log_fd_, data, kept);
  if (kept == size) return;
  cut_ = true;
  dropped_ += size - kept;
  const std::string marker = Printf(
      "\n--- opverify: output cut here: this log reached its cap of %llu bytes "
      "(--executor-log-cap); "
      "the rest of this executor's output is dropped\n",
      static_cast<unsigned long long>(cap_bytes_));
  if (FileSize(log_fd_) + marker.size() <= cap_bytes_)
    WriteAll(log_fd_, marker.data(), marker.size());
}

void CappedLog::Drain() {
  char buffer[1 << 16];
  for (;;) {
    pollfd fds[2] = {{read_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0) break;
    const ssize_t got = read(read_fd_, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // every writer has closed it
    Write(buffer, static_cast<std::size_t>(got));
  }
  if (cut_) {
    const std::string dropped = Printf("--- opverify: %llu bytes of output dropped\n",
                                       static_cast<unsigned long long>(dropped_.load()));
    if (FileSize(log_fd_) + dropped.size() <= cap_bytes_)
      WriteAll(log_fd_, dropped.data(), dropped.size());
  }
  std::lock_guard<std::mutex> lock(mutex_);
  done_ = true;
  ended_.notify_all();
}

void CappedLog::Finish(double timeout_s) {
  CloseWriteEnd();
  if (!thread_.joinable()) return;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    ended_.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return done_; });
  }
  const std::uint64_t one = 1;
  if (write(stop_fd_, &one, sizeof one) < 0) {
    // An eventfd write fails only when its counter would overflow: the thread is told already.
  }
  thread_.join();
}

std::string CappedLog::Tail() {
  // What the child wrote just before may still sit in the pipe: give the thread a moment.
  for (int waited_ms = 0; waited_ms < 200; waited_ms += 5) {
    int pending = 0;
    if (!thread_.joinable() || ioctl(read_fd_, FIONREAD, &pending) != 0 || pending == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return tail_;
}

}  // namespace opverify
