#include "runner/store/tensor_storage.h"

#include <algorithm>
#include <cstdint>

namespace opverify {

h5::DatasetOptions TensorStorage(const TensorView& view) {
  const std::size_t element_bytes = DTypeSize(view.dtype);
  h5::DatasetOptions options;
  if (view.shape.empty() ||
      static_cast<std::size_t>(view.NumElements()) * element_bytes < kContiguousTensorBytes) {
    return options;
  }
  // From the last dimension back: whole dimensions while they fit in a
  // chunk, then as many rows of the next as fit, then single rows.
  options.chunk.assign(view.shape.size(), 1);
  std::size_t chunk_elements = 1;
  for (std::size_t i = view.shape.size(); i-- > 0;) {
    const std::size_t extent = static_cast<std::size_t>(std::max<std::int64_t>(view.shape[i], 1));
    const std::size_t fit =
        std::max<std::size_t>(kTensorChunkBytes / (element_bytes * chunk_elements), 1);
    options.chunk[i] = std::min(extent, fit);
    chunk_elements *= options.chunk[i];
    if (options.chunk[i] < extent) break;
  }
  options.shuffle = element_bytes > 1;
  options.deflate_level = kTensorDeflateLevel;
  return options;
}

}  // namespace opverify
