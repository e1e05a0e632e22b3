// Reading a tensor with a library that may crash on a corrupt file.
//
// libhdf5 (Debian's 1.10.8) trusts what a file says about itself: a damaged
// global heap, for one, makes H5HG_read follow a wild address while reading a
// variable-length string attribute (found by tests/fuzz/fuzz_h5). A tensor
// file handed to `opverify compare` is the user's, so it is read in a forked
// child: what the child reads comes back through a pipe, and a child that
// dies on a signal is an error naming the file, not the caller's death. It
// also loops forever on some damaged files: a child whose next message
// (runner/process/channel.h; a tensor's bytes go in 64 MiB chunks) takes
// longer than the idle limit is killed.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "runner/common/status.h"
#include "runner/tensor_io/tensor_file.h"

namespace opverify {

// Runs `read` in a forked child and returns its tensor (copied, C-contiguous)
// or its Status. A child killed by a signal, or one that exits before it has
// answered, gives an IoError naming `source` and how the child ended ("signal
// SIGSEGV (11)", "exit code 86"); one silent for `idle_limit` is killed and
// gives an IoError saying so. The parent's own state is never touched by
// `read`.
Result<LoadedTensor> ReadInChild(const std::string& source,
                                 const std::function<Result<LoadedTensor>()>& read,
                                 std::chrono::milliseconds idle_limit);

}  // namespace opverify
