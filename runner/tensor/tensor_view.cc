#include "runner/tensor/tensor_view.h"

namespace opverify {

TensorView TensorView::Contiguous(DType dtype, std::vector<std::int64_t> shape, const void* data) {
  TensorView view;
  view.dtype = dtype;
  view.shape = std::move(shape);
  view.strides.resize(view.shape.size());
  std::int64_t stride = static_cast<std::int64_t>(DTypeSize(dtype));
  for (std::size_t i = view.shape.size(); i-- > 0;) {
    view.strides[i] = stride;
    stride *= view.shape[i];
  }
  view.data = static_cast<const std::byte*>(data);
  return view;
}

std::int64_t TensorView::NumElements() const {
  std::int64_t n = 1;
  for (std::int64_t extent : shape) n *= extent;
  return n;
}

bool TensorView::IsCContiguous() const {
  std::int64_t expected = static_cast<std::int64_t>(DTypeSize(dtype));
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

const std::byte* TensorView::ElementAt(std::int64_t flat) const {
  std::int64_t offset = 0;
  for (std::size_t i = shape.size(); i-- > 0;) {
    const std::int64_t extent = shape[i];
    offset += (flat % extent) * strides[i];
    flat /= extent;
  }
  return data + offset;
}

std::string ShapeToString(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

}  // namespace opverify
