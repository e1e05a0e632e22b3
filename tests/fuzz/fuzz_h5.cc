// libFuzzer target: an HDF5 file read as a tensor input (FILE.h5:/t, the
// layouts h5py writes); what it yields is walked element by element.
//
// Each input is read twice. First as `opverify compare` reads it, through
// ReadTensorFile, whose forked reader turns a crash or a loop of libhdf5
// (Debian's, not instrumented: it has both, tensor_io/isolated_read.h) into
// an error. A sanitizer's report in our own reader code ends that child with
// an exit code instead of a signal: a finding, so it traps. Then, unless the
// library crashed or hung, in this process with ReadH5Dataset: coverage is
// only seen here (the child's counters die with it), and both reads must
// agree on whether the file is a tensor.
//
// ASan's interceptors (memcpy, strlen, ...) also check the calls libhdf5
// makes, so an overread inside the library is reported in the child too,
// with an exit code. Such a report whose stack reaches libhdf5 before our
// code is the library's crash, not ours: LibraryReport ends the child with
// SIGABRT instead, as the uninstrumented library's own crash would.
#include <sanitizer/asan_interface.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>

#include "runner/tensor_io/h5_tensor.h"
#include "runner/tensor_io/tensor_file.h"
#include "tests/fuzz/fuzz_input_file.h"

namespace {

bool Contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

void Walk(const opverify::TensorView& view) {
  volatile std::uint8_t sink = 0;
  const std::int64_t count = view.NumElements();
  for (std::int64_t i = 0; i < count && i < (1 << 16); ++i) {
    sink = sink ^ *reinterpret_cast<const std::uint8_t*>(view.ElementAt(i));
  }
  if (count > 0) sink = sink ^ *reinterpret_cast<const std::uint8_t*>(view.ElementAt(count - 1));
  (void)sink;
}

// Whether the first stack of an ASan report reaches libhdf5 before any frame
// of instrumented code: the sanitizer's interceptors (memcpy, strdup, ...)
// are frames of this binary without a source location, our code has one.
bool FirstFrameInLibhdf5(const char* report) {
  std::istringstream lines(report);
  std::string line;
  bool in_stack = false;
  while (std::getline(lines, line)) {
    const std::size_t start = line.find_first_not_of(' ');
    const bool frame = start != std::string::npos && line[start] == '#';
    if (!frame) {
      if (in_stack) return false;
      continue;
    }
    in_stack = true;
    if (Contains(line, "libhdf5")) return true;
    if (Contains(line, ".cc:") || Contains(line, ".h:") || Contains(line, ".c:")) return false;
  }
  return false;
}

void LibraryReport(const char* report) {
  if (!FirstFrameInLibhdf5(report)) return;
  std::signal(SIGABRT, SIG_DFL);
  std::raise(SIGABRT);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  __asan_set_error_report_callback(LibraryReport);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = opverify::fuzz::WriteInput("t.h5", data, size);
  for (const char* dataset : {"/t", "/g/t"}) {
    const opverify::Result<opverify::LoadedTensor> isolated =
        opverify::ReadTensorFile(path + ":" + dataset, std::nullopt, std::chrono::seconds(1));
    if (isolated.ok()) {
      Walk(isolated->view);
    } else {
      const std::string& message = isolated.status().message();
      if (message.empty() || Contains(message, "crashed the reader (exit code")) __builtin_trap();
      if (Contains(message, "crashed the reader") || Contains(message, "made no progress"))
        continue;
    }
    const opverify::Result<opverify::LoadedTensor> read =
        opverify::ReadH5Dataset(path, dataset, std::nullopt);
    if (read.ok() != isolated.ok() || (!read.ok() && read.status().message().empty()))
      __builtin_trap();
    if (read.ok()) Walk(read->view);
  }
  return 0;
}
