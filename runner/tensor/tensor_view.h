// A borrowed, read-only view of a tensor in host memory.
//
// The view never owns its bytes: whoever made it (a file reader, a numpy
// array, a torch tensor) keeps them alive while the view is used. Elements are
// in the machine's byte order. Strides are in bytes and may be zero or
// negative, so Fortran-order files, transposed tensors and broadcast values
// are read without copying.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runner/tensor/dtype.h"

namespace opverify {

struct TensorView {
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  // bytes, one per dimension
  const std::byte* data = nullptr;

  // A C-ordered (row-major) view of `data`.
  static TensorView Contiguous(DType dtype, std::vector<std::int64_t> shape, const void* data);

  std::int64_t NumElements() const;
  bool IsCContiguous() const;
  // Address of the element at logical (C-order) flat index `flat`.
  const std::byte* ElementAt(std::int64_t flat) const;
};

// "[2, 3, 4]"
std::string ShapeToString(const std::vector<std::int64_t>& shape);

}  // namespace opverify
