// libFuzzer target: an HDF5 file read as a tensor input (FILE.h5:/t, the
// layouts h5py writes); what it yields is walked element by element.
// It is read as `opverify compare` reads it, through ReadTensorFile, whose
// forked reader turns a crash of libhdf5 (Debian's, not instrumented: it has
// some, tensor_io/isolated_read.h) into an error. A sanitizer's report in our
// own reader code ends the child with an exit code instead of a signal: that
// is a finding, and traps here.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "runner/tensor_io/tensor_file.h"
#include "tests/fuzz/fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = opverify::fuzz::WriteInput("t.h5", data, size);
  for (const char* dataset : {":/t", ":/g/t"}) {
    const opverify::Result<opverify::LoadedTensor> read =
        opverify::ReadTensorFile(path + dataset, std::nullopt, std::chrono::seconds(3));
    if (read.ok()) {
      const opverify::TensorView& view = read->view;
      volatile std::uint8_t sink = 0;
      const std::int64_t count = view.NumElements();
      for (std::int64_t i = 0; i < count && i < (1 << 16); ++i) {
        sink = sink ^ *reinterpret_cast<const std::uint8_t*>(view.ElementAt(i));
      }
      if (count > 0)
        sink = sink ^ *reinterpret_cast<const std::uint8_t*>(view.ElementAt(count - 1));
      (void)sink;
    } else if (read.status().message().empty() ||
               read.status().message().find("crashed the reader (exit code") != std::string::npos) {
      __builtin_trap();
    }
  }
  return 0;
}
