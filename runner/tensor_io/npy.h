// NumPy's .npy format, versions 1.0, 2.0 and 3.0
// (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html).
#pragma once

#include <optional>
#include <string>

#include "runner/common/status.h"
#include "runner/tensor_io/tensor_file.h"

namespace opverify {

// Memory-maps the file; the view points into the map (C or Fortran order
// through strides). Data in the other byte order is swapped into a buffer.
// Structured dtypes and object arrays are refused.
Result<LoadedTensor> ReadNpy(const std::string& path, std::optional<DType> logical_dtype);

// Writes a C-ordered version 1.0 file (2.0 when the header is too long for
// 1.0; the header is ASCII, so 3.0 is never needed).
// bfloat16 and float8 are written as uint16 / uint8.
Status WriteNpy(const std::string& path, const TensorView& view);

}  // namespace opverify
