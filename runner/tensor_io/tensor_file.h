// Tensors read from files for the judge: NumPy .npy files and HDF5 datasets.
//
// A spec is either "path/to/file.npy" or "path/to/file.h5:/group/dataset"
// (the last ":/" splits file and dataset). bfloat16 and float8 have no NumPy
// or HDF5 type: they are stored as raw uint16/uint8 (or numpy void V2/V1)
// and named by `logical_dtype` (`--dtype`) or, in HDF5, by a string
// attribute `dtype` on the dataset.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/status.h"
#include "runner/tensor/tensor_view.h"

namespace opverify {

// A view plus whatever keeps its bytes alive (a memory map or a buffer).
struct LoadedTensor {
  TensorView view;
  std::shared_ptr<const void> owner;
  std::string source;  // the spec it was read from, for messages
};

// How long an HDF5 tensor's reader (a forked child, isolated_read.h) may send
// nothing before it is killed as hung on a corrupt file.
inline constexpr std::chrono::milliseconds kTensorReaderIdleLimit{60'000};

// Errors name the file (and dataset) and what is wrong: missing file,
// truncated data, bad header, size mismatch, unknown dtype, missing dataset,
// a file that crashes or hangs libhdf5.
Result<LoadedTensor> ReadTensorFile(
    const std::string& spec, std::optional<DType> logical_dtype = std::nullopt,
    std::chrono::milliseconds reader_idle_limit = kTensorReaderIdleLimit);

// Applies a logical dtype to a tensor read from storage: uint16/V2 storage
// becomes bfloat16 (or float16), uint8/V1 storage float8_*, uint32 storage
// complex32; a view already of
// that dtype is kept. Anything else is an error naming `source`.
Status ApplyLogicalDType(TensorView* view, DType logical, const std::string& source);

// The dtype a file stores `dtype` as: uint16 for bfloat16, uint8 for float8,
// uint32 for complex32, `dtype` itself otherwise. ApplyLogicalDType undoes it.
DType StorageDType(DType dtype);

// The bytes of `view` in C order: the view's own memory when it is
// C-contiguous, else a packed copy made in `scratch`. For writers.
const std::byte* CContiguousBytes(const TensorView& view, std::vector<std::byte>* scratch);

}  // namespace opverify
