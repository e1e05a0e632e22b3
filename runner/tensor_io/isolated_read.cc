#include "runner/tensor_io/isolated_read.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "runner/process/subprocess.h"

namespace opverify {
namespace {

// What the child sends: one tag byte, then the Status (code, message) or the
// tensor (dtype, rank, shape, byte count, C-ordered bytes).
constexpr char kStatusTag = 'S';
constexpr char kTensorTag = 'T';

bool WriteAll(int fd, const void* data, std::size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = write(fd, bytes, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    bytes += written;
    size -= static_cast<std::size_t>(written);
  }
  return true;
}

template <typename T>
bool WriteValue(int fd, T value) {
  return WriteAll(fd, &value, sizeof(value));
}

bool WriteAnswer(int fd, const Result<LoadedTensor>& read) {
  if (!read.ok()) {
    const std::string& message = read.status().message();
    return WriteValue(fd, kStatusTag) &&
           WriteValue(fd, static_cast<std::int32_t>(read.status().code())) &&
           WriteValue(fd, static_cast<std::uint64_t>(message.size())) &&
           WriteAll(fd, message.data(), message.size());
  }
  const TensorView& view = read->view;
  std::vector<std::byte> scratch;
  const std::byte* bytes = CContiguousBytes(view, &scratch);
  const std::uint64_t size = static_cast<std::uint64_t>(view.NumElements()) * DTypeSize(view.dtype);
  bool ok = WriteValue(fd, kTensorTag) && WriteValue(fd, static_cast<std::int32_t>(view.dtype)) &&
            WriteValue(fd, static_cast<std::uint64_t>(view.shape.size()));
  for (std::int64_t extent : view.shape) ok = ok && WriteValue(fd, extent);
  return ok && WriteValue(fd, size) && WriteAll(fd, bytes, size);
}

// Reads the child's answer from `fd`; false when the pipe ends early or no
// byte comes for `idle_limit` (then timed_out()).
class AnswerReader {
 public:
  AnswerReader(int fd, std::chrono::milliseconds idle_limit) : fd_(fd), idle_limit_(idle_limit) {}

  bool timed_out() const { return timed_out_; }

  bool ReadAll(void* data, std::size_t size) {
    char* bytes = static_cast<char*>(data);
    while (size > 0) {
      pollfd ready = {fd_, POLLIN, 0};
      const int polled = poll(&ready, 1, static_cast<int>(idle_limit_.count()));
      if (polled < 0 && errno == EINTR) continue;
      if (polled == 0) timed_out_ = true;
      if (polled <= 0) return false;
      const ssize_t got = read(fd_, bytes, size);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      bytes += got;
      size -= static_cast<std::size_t>(got);
    }
    return true;
  }

  template <typename T>
  bool ReadValue(T* value) {
    return ReadAll(value, sizeof(*value));
  }

 private:
  int fd_;
  std::chrono::milliseconds idle_limit_;
  bool timed_out_ = false;
};

// The answer, or none when the child did not finish it (it crashed).
std::optional<Result<LoadedTensor>> ReadAnswer(AnswerReader& reader, const std::string& source) {
  char tag = 0;
  if (!reader.ReadValue(&tag)) return std::nullopt;
  std::int32_t code = 0;
  if (tag == kStatusTag) {
    std::uint64_t size = 0;
    if (!reader.ReadValue(&code) || !reader.ReadValue(&size) || size > (1u << 20))
      return std::nullopt;
    std::string message(size, '\0');
    if (!reader.ReadAll(message.data(), size)) return std::nullopt;
    switch (static_cast<Status::Code>(code)) {
      case Status::Code::kInvalidInput:
        return Status::InvalidInput(std::move(message));
      case Status::Code::kNotFound:
        return Status::NotFound(std::move(message));
      case Status::Code::kIoError:
        return Status::IoError(std::move(message));
      case Status::Code::kUnsupported:
        return Status::Unsupported(std::move(message));
      default:
        return Status::Internal(std::move(message));
    }
  }
  std::uint64_t rank = 0;
  if (tag != kTensorTag || !reader.ReadValue(&code) || !reader.ReadValue(&rank) || rank > 64) {
    return std::nullopt;
  }
  std::vector<std::int64_t> shape(rank);
  for (std::int64_t& extent : shape) {
    if (!reader.ReadValue(&extent)) return std::nullopt;
  }
  std::uint64_t size = 0;
  if (!reader.ReadValue(&size)) return std::nullopt;
  auto buffer = std::make_shared<std::vector<std::byte>>();
  try {
    buffer->resize(size);
  } catch (const std::bad_alloc&) {
    return Status::IoError(source + ": cannot allocate " + std::to_string(size) + " bytes");
  }
  if (!reader.ReadAll(buffer->data(), size)) return std::nullopt;
  LoadedTensor tensor;
  tensor.view = TensorView::Contiguous(static_cast<DType>(code), std::move(shape), buffer->data());
  tensor.owner = std::move(buffer);
  tensor.source = source;
  return tensor;
}

std::string HowItEnded(int raw) {
  if (WIFSIGNALED(raw)) {
    const int signal = WTERMSIG(raw);
    return "signal " + SignalName(signal) + " (" + std::to_string(signal) + ")";
  }
  if (WIFEXITED(raw)) return "exit code " + std::to_string(WEXITSTATUS(raw));
  return "wait status " + std::to_string(raw);
}

}  // namespace

Result<LoadedTensor> ReadInChild(const std::string& source,
                                 const std::function<Result<LoadedTensor>()>& read,
                                 std::chrono::milliseconds idle_limit) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Status::IoError(source + ": cannot make a pipe for its reader: " + std::strerror(errno));
  }
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return Status::IoError(source + ": cannot start its reader: " + std::strerror(error));
  }
  if (pid == 0) {
    // The caller's handlers (a stop flag's self-pipe, a sanitizer's or
    // fuzzer's crash report) are not the reader's: a crash is a plain death.
    for (int signal = 1; signal < NSIG; ++signal) {
      if (signal != SIGKILL && signal != SIGSTOP) std::signal(signal, SIG_DFL);
    }
    close(pipe_fds[0]);
    const bool answered = WriteAnswer(pipe_fds[1], read());
    _exit(answered ? 0 : 1);
  }
  close(pipe_fds[1]);
  AnswerReader reader(pipe_fds[0], idle_limit);
  std::optional<Result<LoadedTensor>> answer = ReadAnswer(reader, source);
  close(pipe_fds[0]);
  if (reader.timed_out()) kill(pid, SIGKILL);
  int raw = 0;
  while (waitpid(pid, &raw, 0) < 0 && errno == EINTR) {
  }
  if (answer && WIFEXITED(raw) && WEXITSTATUS(raw) == 0) return std::move(*answer);
  if (reader.timed_out()) {
    return Status::IoError(
        source + ": its reader made no progress for " +
        std::to_string(idle_limit.count() / 1000.0).substr(0, 5) +
        " s and was killed: the file is corrupt (libhdf5 loops on some damaged files)");
  }
  return Status::IoError(source + ": reading it crashed the reader (" + HowItEnded(raw) +
                         "): the file is corrupt, or not what it claims to be");
}

}  // namespace opverify
