#include "runner/process/channel.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "runner/common/strings.h"

namespace opverify {
namespace {

constexpr std::size_t kHeaderBytes = 4;

// A point in time to give up at, as poll(2) timeouts.
class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Deadline(double timeout_s) : forever_(timeout_s < 0) {
    // Capped at a year so the time point cannot overflow.
    const std::chrono::duration<double> limit(std::min(forever_ ? 0.0 : timeout_s, 3.2e7));
    end_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(limit);
  }
  // Milliseconds for poll: -1 forever, else the time left rounded up (so a
  // poll that returns 0 means the deadline has passed, not a rounding).
  int PollMs() const {
    if (forever_) return -1;
    const double left_ms = std::chrono::duration<double, std::milli>(end_ - Clock::now()).count();
    return left_ms <= 0 ? 0 : static_cast<int>(std::min(std::ceil(left_ms), double{INT_MAX}));
  }
  bool Passed() const { return !forever_ && Clock::now() >= end_; }

 private:
  bool forever_;
  Clock::time_point end_;
};

std::string ErrnoText(int error) { return std::strerror(error); }

// Blocks SIGPIPE in this thread while it lives, so a write to a pipe whose
// reader has gone fails with EPIPE instead of killing the process; the
// process's own SIGPIPE handling stays untouched.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&sigpipe_);
    sigaddset(&sigpipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &sigpipe_, &saved_);
  }
  ~SigpipeBlock() { pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

  // Takes the SIGPIPE an EPIPE write left pending on this thread, before the
  // old mask is back; one pending from before is someone else's and stays.
  void ConsumeRaised() {
    if (was_pending_) return;
    const timespec no_wait{};
    while (sigtimedwait(&sigpipe_, nullptr, &no_wait) < 0 && errno == EINTR) {
    }
  }

 private:
  sigset_t sigpipe_;
  sigset_t saved_;
  bool was_pending_ = false;
};

enum class ReadEnd { kDone, kTimeout, kClosed, kIoError };

// Reads until `data` holds `size` bytes (from *got on), the deadline passes,
// the writer closes or a read fails (*error says why).
ReadEnd ReadUntil(int fd, char* data, std::size_t size, const Deadline& deadline, std::size_t* got,
                  int* error) {
  while (*got < size) {
    pollfd ready{fd, POLLIN, 0};
    const int polled = poll(&ready, 1, deadline.PollMs());
    if (polled < 0 && errno == EINTR) continue;
    if (polled < 0) {
      *error = errno;
      return ReadEnd::kIoError;
    }
    if (polled == 0) {
      if (deadline.Passed()) return ReadEnd::kTimeout;
      continue;
    }
    if (ready.revents & POLLNVAL) {
      *error = EBADF;
      return ReadEnd::kIoError;
    }
    // POLLIN, POLLHUP or POLLERR: read says which (data, 0 at end, or the error).
    const ssize_t n = read(fd, data + *got, size - *got);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) {
      *error = errno;
      return ReadEnd::kIoError;
    }
    if (n == 0) return ReadEnd::kClosed;
    *got += static_cast<std::size_t>(n);
  }
  return ReadEnd::kDone;
}

Received Failure(ReceiveError error, std::string detail) {
  Received received;
  received.error = error;
  received.detail = std::move(detail);
  return received;
}

}  // namespace

Result<Pipe> MakePipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::IoError("pipe2: " + ErrnoText(errno));
  return Pipe{fds[0], fds[1]};
}

void CloseFd(int* fd) {
  // Linux releases the descriptor even when close reports EINTR: never retry.
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

Status SendMessage(int fd, std::string_view message, double timeout_s) {
  if (message.size() > kMaxMessageBytes) {
    return Status::InvalidInput(Printf("message of %zu bytes is over the %zu-byte limit",
                                       message.size(), kMaxMessageBytes));
  }
  const auto length = static_cast<std::uint32_t>(message.size());
  const char header[kHeaderBytes] = {
      static_cast<char>(length & 0xff), static_cast<char>((length >> 8) & 0xff),
      static_cast<char>((length >> 16) & 0xff), static_cast<char>((length >> 24) & 0xff)};
  const std::size_t total = kHeaderBytes + message.size();
  const Deadline deadline(timeout_s);
  SigpipeBlock sigpipe_block;
  std::size_t sent = 0;
  while (sent < total) {
    pollfd ready{fd, POLLOUT, 0};
    const int polled = poll(&ready, 1, deadline.PollMs());
    if (polled < 0 && errno == EINTR) continue;
    if (polled < 0) return Status::IoError("poll: " + ErrnoText(errno));
    if (polled == 0) {
      if (!deadline.Passed()) continue;
      return Status::IoError(
          Printf("timed out after %g s with %zu of %zu bytes sent", timeout_s, sent, total));
    }
    if (ready.revents & POLLNVAL) return Status::IoError(Printf("fd %d is not open", fd));
    // After POLLOUT a pipe takes PIPE_BUF bytes without blocking, which keeps
    // the deadline even on a blocking descriptor.
    iovec parts[2];
    int count = 0;
    std::size_t budget = PIPE_BUF;
    if (sent < kHeaderBytes) {
      parts[count++] = {const_cast<char*>(header) + sent, kHeaderBytes - sent};
      budget -= kHeaderBytes - sent;
    }
    const std::size_t body_sent = sent < kHeaderBytes ? 0 : sent - kHeaderBytes;
    const std::size_t body_part = std::min(budget, message.size() - body_sent);
    if (body_part > 0) parts[count++] = {const_cast<char*>(message.data()) + body_sent, body_part};
    const ssize_t n = writev(fd, parts, count);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0 && errno == EPIPE) {
      sigpipe_block.ConsumeRaised();
      return Status::IoError(
          Printf("the reader closed the pipe after %zu of %zu bytes", sent, total));
    }
    if (n < 0) return Status::IoError("write: " + ErrnoText(errno));
    sent += static_cast<std::size_t>(n);
  }
  return Status::Ok();
}

bool WaitReadable(int fd, double timeout_s) {
  const Deadline deadline(timeout_s);
  for (;;) {
    pollfd ready{fd, POLLIN, 0};
    const int polled = poll(&ready, 1, deadline.PollMs());
    if (polled < 0 && errno == EINTR) continue;
    if (polled != 0) return true;  // readable, closed, or an error the read will report
    if (deadline.Passed()) return false;
  }
}

Received ReceiveMessage(int fd, double timeout_s) {
  const Deadline deadline(timeout_s);
  char header[kHeaderBytes];
  std::size_t got = 0;
  int error = 0;
  switch (ReadUntil(fd, header, kHeaderBytes, deadline, &got, &error)) {
    case ReadEnd::kDone:
      break;
    case ReadEnd::kTimeout:
      return Failure(ReceiveError::kTimeout,
                     got == 0 ? Printf("no message within %g s", timeout_s)
                              : Printf("timed out after %g s mid-message (%zu of %zu length bytes)",
                                       timeout_s, got, kHeaderBytes));
    case ReadEnd::kClosed:
      return Failure(
          ReceiveError::kClosed,
          got == 0 ? std::string("the writer closed the pipe")
                   : Printf("the writer closed the pipe mid-message (%zu of %zu length bytes)", got,
                            kHeaderBytes));
    case ReadEnd::kIoError:
      return Failure(ReceiveError::kIoError, "read: " + ErrnoText(error));
  }
  std::size_t length = 0;
  for (std::size_t i = 0; i < kHeaderBytes; ++i) {
    length |= std::size_t{static_cast<unsigned char>(header[i])} << (8 * i);
  }
  if (length > kMaxMessageBytes) {
    return Failure(ReceiveError::kIoError,
                   Printf("a message of %zu bytes is over the %zu-byte limit "
                          "(a corrupt stream?)",
                          length, kMaxMessageBytes));
  }

  // The buffer grows as bytes arrive, so a corrupt length cannot allocate a gigabyte up front.
  Received received;
  got = 0;
  while (got < length) {
    if (got == received.message.size()) {
      received.message.resize(std::min(length, std::max<std::size_t>(got * 2, 1 << 16)));
    }
    const ReadEnd end =
        ReadUntil(fd, received.message.data(), received.message.size(), deadline, &got, &error);
    if (end == ReadEnd::kDone) continue;
    if (end == ReadEnd::kTimeout) {
      return Failure(
          ReceiveError::kTimeout,
          Printf("timed out after %g s mid-message (%zu of %zu bytes)", timeout_s, got, length));
    }
    if (end == ReadEnd::kClosed) {
      return Failure(
          ReceiveError::kClosed,
          Printf("the writer closed the pipe mid-message (%zu of %zu bytes)", got, length));
    }
    return Failure(ReceiveError::kIoError, "read: " + ErrnoText(error));
  }
  received.ok = true;
  return received;
}

}  // namespace opverify
