// Tensors as HDF5 datasets, in the layout h5py reads and writes: numeric
// datasets of the native types, bool as h5py's int8 enum {FALSE, TRUE},
// complex as a compound {r, i}, float16 as HDF5's 16-bit IEEE float, and
// bfloat16 / float8 as raw uint16 / uint8 with a string attribute `dtype`.
#pragma once

#include <optional>
#include <string>

#include "runner/common/status.h"
#include "runner/h5/h5.h"
#include "runner/tensor_io/tensor_file.h"

namespace opverify {

// Errors name the file and dataset: missing file, not an HDF5 file, missing
// dataset, a type with no tensor dtype, a `dtype` attribute that disagrees
// with `logical_dtype`. The tensor is read into a buffer it owns.
Result<LoadedTensor> ReadH5Dataset(const std::string& file, const std::string& dataset,
                                   std::optional<DType> logical_dtype);

// Creates (or replaces) `dataset` under `parent`, an open file or group;
// missing groups on the way are created. `options`: chunking and filters
// (the store's choice per tensor: runner/store/tensor_storage.h).
Status WriteH5Dataset(const h5::Handle& parent, const std::string& dataset, const TensorView& view,
                      const h5::DatasetOptions& options = {});

}  // namespace opverify
