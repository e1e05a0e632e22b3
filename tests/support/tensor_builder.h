// Test tensors that own their bytes, built from double values.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <vector>

#include "runner/judge/float_format.h"
#include "runner/tensor/tensor_view.h"

namespace opverify::testing {

class OwnedTensor {
 public:
  // Values are cast to `dtype` (floats round to nearest even, ints truncate).
  OwnedTensor(DType dtype, std::vector<std::int64_t> shape, const std::vector<double>& values)
      : dtype_(dtype), shape_(std::move(shape)), bytes_(values.size() * DTypeSize(dtype)) {
    for (std::size_t i = 0; i < values.size(); ++i) Set(i, values[i]);
  }
  OwnedTensor(DType dtype, const std::vector<double>& values)
      : OwnedTensor(dtype, {static_cast<std::int64_t>(values.size())}, values) {}

  // Complex values, stored interleaved.
  static OwnedTensor Complex(DType dtype, const std::vector<std::complex<double>>& values) {
    std::vector<double> flat;
    for (const auto& v : values) {
      flat.push_back(v.real());
      flat.push_back(v.imag());
    }
    OwnedTensor t(ComplexPart(dtype), flat);
    t.dtype_ = dtype;
    t.shape_ = {static_cast<std::int64_t>(values.size())};
    return t;
  }

  // Raw bit patterns (for NaN payloads and signed zeros).
  static OwnedTensor FromBits(DType dtype, const std::vector<std::uint64_t>& bits) {
    OwnedTensor t(dtype, std::vector<double>(bits.size(), 0.0));
    for (std::size_t i = 0; i < bits.size(); ++i) {
      std::memcpy(t.bytes_.data() + i * DTypeSize(dtype), &bits[i], DTypeSize(dtype));
    }
    return t;
  }

  TensorView view() const { return TensorView::Contiguous(dtype_, shape_, bytes_.data()); }
  operator TensorView() const { return view(); }  // NOLINT: tests pass tensors as views

 private:
  void Set(std::size_t i, double v) {
    std::byte* p = bytes_.data() + i * DTypeSize(dtype_);
    switch (dtype_) {
      case DType::kFloat64: Put<double>(p, v); break;
      case DType::kFloat32: Put<float>(p, static_cast<float>(v)); break;
      case DType::kFloat16:
      case DType::kBFloat16:
        Put<std::uint16_t>(p, static_cast<std::uint16_t>(EncodeFloat(v, FormatOf(dtype_))));
        break;
      case DType::kFloat8E4M3FN:
      case DType::kFloat8E5M2:
        Put<std::uint8_t>(p, static_cast<std::uint8_t>(EncodeFloat(v, FormatOf(dtype_))));
        break;
      case DType::kBool: Put<std::uint8_t>(p, v != 0 ? 1 : 0); break;
      case DType::kInt8: Put<std::int8_t>(p, static_cast<std::int8_t>(v)); break;
      case DType::kInt16: Put<std::int16_t>(p, static_cast<std::int16_t>(v)); break;
      case DType::kInt32: Put<std::int32_t>(p, static_cast<std::int32_t>(v)); break;
      case DType::kInt64: Put<std::int64_t>(p, static_cast<std::int64_t>(v)); break;
      case DType::kUInt8: Put<std::uint8_t>(p, static_cast<std::uint8_t>(v)); break;
      case DType::kUInt16: Put<std::uint16_t>(p, static_cast<std::uint16_t>(v)); break;
      case DType::kUInt32: Put<std::uint32_t>(p, static_cast<std::uint32_t>(v)); break;
      case DType::kUInt64: Put<std::uint64_t>(p, static_cast<std::uint64_t>(v)); break;
      case DType::kComplex32:
      case DType::kComplex64:
      case DType::kComplex128: break;  // built through Complex()
    }
  }
  template <typename T>
  static void Put(std::byte* p, T v) { std::memcpy(p, &v, sizeof v); }

  DType dtype_;
  std::vector<std::int64_t> shape_;
  std::vector<std::byte> bytes_;
};

}  // namespace opverify::testing
