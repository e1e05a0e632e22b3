// libFuzzer target: an HDF5 file read as a tensor input (FILE.h5:/t, the
// layouts h5py writes); what it yields is walked element by element.
// libhdf5 itself is Debian's, not instrumented: this finds what our reader
// does with what the library hands back, and crashes of the library.
#include <cstdint>
#include <optional>
#include <string>

#include "runner/tensor_io/h5_tensor.h"
#include "tests/fuzz/fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = opverify::fuzz::WriteInput("t.h5", data, size);
  for (const char* dataset : {"/t", "/g/t"}) {
    const opverify::Result<opverify::LoadedTensor> read =
        opverify::ReadH5Dataset(path, dataset, std::nullopt);
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
    } else if (read.status().message().empty()) {
      __builtin_trap();
    }
  }
  return 0;
}
