// How a stored tensor is laid out in its HDF5 dataset (schemas/hdf5-layout.md):
// under 64 KiB contiguous, as it is (one read, no filter to run); from 64
// KiB chunked, about 1 MiB a chunk (HDF5's default chunk cache) split along
// the leading dimensions, with shuffle (for elements wider than a byte) and
// deflate level 1: the cheapest level, which gets most of the gain on
// float data.
#pragma once

#include <cstddef>

#include "runner/h5/h5.h"
#include "runner/tensor/tensor_view.h"

namespace opverify {

constexpr std::size_t kContiguousTensorBytes = 64 << 10;
constexpr std::size_t kTensorChunkBytes = 1 << 20;
constexpr int kTensorDeflateLevel = 1;

// The dataset options for `view` (its shape and element size).
h5::DatasetOptions TensorStorage(const TensorView& view);

}  // namespace opverify
