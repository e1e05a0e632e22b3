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
#include <chrono>
#include <cstdint>
#include <optional>
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

}  // namespace

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
