// How a parent and its executor process talk (runner/executor/).
//
// Requests and replies are JSON messages on two pipes (channel.h framing).
// A reply's tensors travel as raw bytes in a memory file (memfd) the parent
// creates and the executor inherits: the reply lists each tensor's dtype,
// shape, byte offset and size. The executor only ever grows that file.
#pragma once

namespace opverify::executor_protocol {

// File descriptors the executor finds open at start.
constexpr int kRequestFd = 3;   // parent -> executor
constexpr int kReplyFd = 4;     // executor -> parent
constexpr int kTensorFd = 5;    // the shared memory file

}  // namespace opverify::executor_protocol
