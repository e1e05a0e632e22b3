// Length-prefixed messages over a pipe, with deadlines: how a parent and its
// executor talk. A message is a 4-byte little-endian length and the bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "runner/common/status.h"

namespace opverify {

// The largest message either side accepts: a longer length is a corrupt stream.
constexpr std::size_t kMaxMessageBytes = std::size_t{1} << 30;

// Pipes whose ends close on exec (pass an end to a child with SpawnOptions::fds).
struct Pipe {
  int read_fd = -1;
  int write_fd = -1;
};
Result<Pipe> MakePipe();
void CloseFd(int* fd);  // closes and sets -1; ignores -1

enum class ReceiveError { kTimeout, kClosed, kIoError };

struct Received {
  bool ok = false;
  std::string message;
  ReceiveError error = ReceiveError::kIoError;
  std::string detail;  // what went wrong, and how much of a message had arrived
};

// Writes one whole message, waiting at most timeout_s (negative: forever) for
// the reader to make room. A reader that has gone is an error Status, never a
// SIGPIPE: the signal is blocked in this thread during the write and the one
// the failed write raised is consumed. After an error the stream is out of step.
Status SendMessage(int fd, std::string_view message, double timeout_s = -1);
// Waits at most timeout_s (negative: forever) for a whole message. kClosed:
// the writer closed the pipe (detail says if mid-message). After a timeout
// mid-message, kClosed mid-message or kIoError the stream is out of step.
Received ReceiveMessage(int fd, double timeout_s);
// Waits at most timeout_s for `fd` to have something to read (a message's
// first bytes, or the writer's close): true then, false when the time passed.
// Lets a caller wait in slices and look at other things between them.
bool WaitReadable(int fd, double timeout_s);

}  // namespace opverify
