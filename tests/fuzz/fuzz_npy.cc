// libFuzzer target: a .npy file, read as `opverify compare` reads one, with
// and without a logical dtype; what it yields is walked element by element.
#include <cstdint>
#include <optional>
#include <string>

#include "runner/tensor_io/npy.h"
#include "tests/fuzz/fuzz_input_file.h"

namespace {

// Touches every element the view claims, so a view past its buffer is found.
void Walk(const opverify::TensorView& view) {
  const std::size_t size = opverify::DTypeSize(view.dtype);
  volatile std::uint8_t sink = 0;
  const std::int64_t count = view.NumElements();
  for (std::int64_t i = 0; i < count && i < (1 << 16); ++i) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(view.ElementAt(i));
    for (std::size_t b = 0; b < size; ++b) sink = sink ^ bytes[b];
  }
  if (count > 0)
    sink = sink ^ *reinterpret_cast<const std::uint8_t*>(view.ElementAt(count - 1) + size - 1);
  (void)sink;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = opverify::fuzz::WriteInput("t.npy", data, size);
  for (const std::optional<opverify::DType> logical :
       {std::optional<opverify::DType>(),
        std::optional<opverify::DType>(opverify::DType::kBFloat16)}) {
    const opverify::Result<opverify::LoadedTensor> read = opverify::ReadNpy(path, logical);
    if (read.ok()) {
      Walk(read->view);
    } else if (read.status().message().empty()) {
      __builtin_trap();
    }
  }
  return 0;
}
