// Files and folders a user names (manifests, tensors, task and implementation
// files, run folders) are checked before anything opens them: open(2) on a
// FIFO waits for a writer forever, and /dev/zero or a /proc file never ends.
#pragma once

#include <cstddef>
#include <string>

#include "runner/common/status.h"

namespace opverify {

// OK when `path` is a regular file (symlinks followed). NotFound "<path>:
// no such <role>" when nothing is there; InvalidInput "<path>: <role> is a
// FIFO, not a regular file" (or a folder, a device, a socket) otherwise.
// stat(2) only: never blocks.
Status CheckRegularFile(const std::string& path, const std::string& role);

// OK when `path` is a folder; NotFound or InvalidInput as above.
Status CheckDirectory(const std::string& path, const std::string& role);

// The whole file: CheckRegularFile's errors, then InvalidInput when it holds
// more than `max_bytes` and IoError when it cannot be read. Opened with
// O_NONBLOCK and checked again on the descriptor, so a FIFO put in its place
// after the check is refused too.
Result<std::string> ReadUserFile(const std::string& path, const std::string& role,
                                 std::size_t max_bytes);

}  // namespace opverify
