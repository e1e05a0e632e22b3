#include "runner/tensor_io/isolated_read.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "runner/process/channel.h"
#include "runner/process/subprocess.h"

namespace opverify {
namespace {

// What the child sends, as channel.h messages: one head, then for a tensor
// its C-ordered bytes in chunks (a message is at most kMaxMessageBytes). The
// head is a tag byte and fixed-width fields: a Status (code, the message's
// bytes) or a tensor (dtype, rank, the shape, the byte count).
constexpr char kStatusTag = 'S';
constexpr char kTensorTag = 'T';
constexpr std::size_t kChunkBytes = std::size_t{64} << 20;

template <typename T>
void Append(std::string* out, T value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(value));
}

// Reads fixed-width fields from a head, front to back; false once it runs out.
class HeadReader {
 public:
  explicit HeadReader(const std::string& head) : head_(head) {}
  template <typename T>
  bool Take(T* value) {
    if (head_.size() - at_ < sizeof(T)) return false;
    std::memcpy(value, head_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  std::string Rest() const { return head_.substr(at_); }

 private:
  const std::string& head_;
  std::size_t at_ = 0;
};

bool SendAnswer(int fd, const Result<LoadedTensor>& read) {
  std::string head;
  if (!read.ok()) {
    head += kStatusTag;
    Append(&head, static_cast<std::int32_t>(read.status().code()));
    head += read.status().message();
    return SendMessage(fd, head).ok();
  }
  const TensorView& view = read->view;
  std::vector<std::byte> scratch;
  const char* bytes = reinterpret_cast<const char*>(CContiguousBytes(view, &scratch));
  const std::uint64_t size = static_cast<std::uint64_t>(view.NumElements()) * DTypeSize(view.dtype);
  head += kTensorTag;
  Append(&head, static_cast<std::int32_t>(view.dtype));
  Append(&head, static_cast<std::uint64_t>(view.shape.size()));
  for (std::int64_t extent : view.shape) Append(&head, extent);
  Append(&head, size);
  if (!SendMessage(fd, head).ok()) return false;
  for (std::uint64_t sent = 0; sent < size; sent += kChunkBytes) {
    const std::size_t part =
        static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, size - sent));
    if (!SendMessage(fd, std::string_view(bytes + sent, part)).ok()) return false;
  }
  return true;
}

Status WithCode(std::int32_t code, std::string message) {
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

// The child's answer; none when it stopped sending before the end (it died),
// and *timed_out when a message took longer than `idle_limit_s` to come.
std::optional<Result<LoadedTensor>> ReceiveAnswer(int fd, const std::string& source,
                                                  double idle_limit_s, bool* timed_out) {
  const auto receive = [&]() -> std::optional<std::string> {
    Received received = ReceiveMessage(fd, idle_limit_s);
    *timed_out = !received.ok && received.error == ReceiveError::kTimeout;
    if (!received.ok) return std::nullopt;
    return std::move(received.message);
  };
  const std::optional<std::string> head = receive();
  if (!head || head->empty()) return std::nullopt;
  HeadReader reader(*head);
  char tag = 0;
  std::int32_t code = 0;
  reader.Take(&tag);
  if (!reader.Take(&code)) return std::nullopt;
  if (tag == kStatusTag) return WithCode(code, reader.Rest());
  std::uint64_t rank = 0;
  if (tag != kTensorTag || !reader.Take(&rank) || rank > 64) return std::nullopt;
  std::vector<std::int64_t> shape(rank);
  for (std::int64_t& extent : shape) {
    if (!reader.Take(&extent)) return std::nullopt;
  }
  std::uint64_t size = 0;
  if (!reader.Take(&size)) return std::nullopt;
  auto buffer = std::make_shared<std::vector<std::byte>>();
  try {
    buffer->resize(size);
  } catch (const std::bad_alloc&) {
    return Status::IoError(source + ": cannot allocate " + std::to_string(size) + " bytes");
  }
  for (std::uint64_t got = 0; got < size;) {
    const std::optional<std::string> chunk = receive();
    if (!chunk || chunk->empty() || chunk->size() > size - got) return std::nullopt;
    std::memcpy(buffer->data() + got, chunk->data(), chunk->size());
    got += chunk->size();
  }
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
  Result<Pipe> pipe = MakePipe();
  if (!pipe.ok())
    return Status::IoError(source +
                           ": cannot make a pipe for its reader: " + pipe.status().message());
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    CloseFd(&pipe->read_fd);
    CloseFd(&pipe->write_fd);
    return Status::IoError(source + ": cannot start its reader: " + std::strerror(error));
  }
  if (pid == 0) {
    // The caller's handlers (a stop flag's self-pipe, a sanitizer's or
    // fuzzer's crash report) are not the reader's: a crash is a plain death.
    for (int signal = 1; signal < NSIG; ++signal) {
      if (signal != SIGKILL && signal != SIGSTOP) std::signal(signal, SIG_DFL);
    }
    CloseFd(&pipe->read_fd);
    _exit(SendAnswer(pipe->write_fd, read()) ? 0 : 1);
  }
  CloseFd(&pipe->write_fd);
  const double idle_limit_s = static_cast<double>(idle_limit.count()) / 1000.0;
  bool timed_out = false;
  std::optional<Result<LoadedTensor>> answer =
      ReceiveAnswer(pipe->read_fd, source, idle_limit_s, &timed_out);
  CloseFd(&pipe->read_fd);
  if (timed_out) kill(pid, SIGKILL);
  int raw = 0;
  while (waitpid(pid, &raw, 0) < 0 && errno == EINTR) {
  }
  if (answer && WIFEXITED(raw) && WEXITSTATUS(raw) == 0) return std::move(*answer);
  if (timed_out) {
    return Status::IoError(
        source + ": its reader made no progress for " + std::to_string(idle_limit_s).substr(0, 5) +
        " s and was killed: the file is corrupt (libhdf5 loops on some damaged files)");
  }
  return Status::IoError(source + ": reading it crashed the reader (" + HowItEnded(raw) +
                         "): the file is corrupt, or not what it claims to be");
}

}  // namespace opverify
