#include "runner/judge/element_reader.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "runner/judge/float_format.h"

namespace opverify {

struct ReaderScratch {
  std::vector<std::byte> gathered;
  std::vector<double> doubles;
  std::vector<Int128> ints;
};

namespace {

__extension__ typedef unsigned __int128 UInt128;

template <typename T>
T Load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T>
void WidenIntegers(const std::byte* src, std::int64_t n, double* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(Load<T>(src + i * sizeof(T)));
}

template <typename T>
void WidenIntegersExact(const std::byte* src, std::int64_t n, Int128* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<Int128>(Load<T>(src + i * sizeof(T)));
}

void TableDecode8(const std::byte* src, std::int64_t n, const float* table, double* out) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(src);
  for (std::int64_t i = 0; i < n; ++i) out[i] = table[bytes[i]];
}

// Every element of a real dtype as its exact double value (integers beyond
// 2^53 round; the integer routes use DecodeInts instead).
void DecodeDoubles(DType dtype, const std::byte* src, std::int64_t n, double* out) {
  switch (dtype) {
    case DType::kFloat32: {
      const auto* f = reinterpret_cast<const float*>(src);
      if (reinterpret_cast<std::uintptr_t>(src) % alignof(float) == 0) {
        for (std::int64_t i = 0; i < n; ++i) out[i] = f[i];
      } else {
        for (std::int64_t i = 0; i < n; ++i) out[i] = Load<float>(src + i * 4);
      }
      return;
    }
    case DType::kFloat64:
      std::memcpy(out, src, static_cast<std::size_t>(n) * sizeof(double));
      return;
    case DType::kFloat16: {
      const float* table = Float16Table();
      for (std::int64_t i = 0; i < n; ++i) out[i] = table[Load<std::uint16_t>(src + i * 2)];
      return;
    }
    case DType::kBFloat16:
      for (std::int64_t i = 0; i < n; ++i) out[i] = DecodeBFloat16(Load<std::uint16_t>(src + i * 2));
      return;
    case DType::kFloat8E4M3FN:
      TableDecode8(src, n, Float8E4M3FNTable(), out);
      return;
    case DType::kFloat8E5M2:
      TableDecode8(src, n, Float8E5M2Table(), out);
      return;
    case DType::kBool:
      for (std::int64_t i = 0; i < n; ++i) out[i] = Load<std::uint8_t>(src + i) != 0 ? 1.0 : 0.0;
      return;
    case DType::kInt8:
      return WidenIntegers<std::int8_t>(src, n, out);
    case DType::kInt16:
      return WidenIntegers<std::int16_t>(src, n, out);
    case DType::kInt32:
      return WidenIntegers<std::int32_t>(src, n, out);
    case DType::kInt64:
      return WidenIntegers<std::int64_t>(src, n, out);
    case DType::kUInt8:
      return WidenIntegers<std::uint8_t>(src, n, out);
    case DType::kUInt16:
      return WidenIntegers<std::uint16_t>(src, n, out);
    case DType::kUInt32:
      return WidenIntegers<std::uint32_t>(src, n, out);
    case DType::kUInt64:
      return WidenIntegers<std::uint64_t>(src, n, out);
    case DType::kComplex32:
    case DType::kComplex64:
    case DType::kComplex128:
      break;  // the judge splits complex tensors into their parts first
  }
}

// A float truncated toward zero, when the result is a value of integer dtype
// `as`; else kUnrepresentable (NaN, an infinity, or out of range: casts
// torch leaves undefined, whose results differ between its code paths).
Int128 FloatToInt(double v, DType as) {
  if (!std::isfinite(v)) return kUnrepresentable;
  const int bits = static_cast<int>(DTypeSize(as)) * 8;
  const double t = std::trunc(v);
  const double low = IsSigned(as) ? -std::ldexp(1.0, bits - 1) : 0.0;
  const double high = std::ldexp(1.0, IsSigned(as) ? bits - 1 : bits);  // exclusive
  if (t < low || t >= high) return kUnrepresentable;
  return static_cast<Int128>(t);
}

// torch builds its 16- and 8-bit floats (c10's Half, BFloat16, Float8 types)
// from a float: a cast to them rounds to float32 first, then to the target.
double FromFloat32(float rounded, DType as) { return as == DType::kFloat32 ? rounded : RoundToDType(rounded, as); }

double CastFloat(double v, DType as) {
  return as == DType::kFloat64 ? v : FromFloat32(static_cast<float>(v), as);
}

// An integer to a float dtype: rounded once from the exact integer (to
// float32 first for the narrower ones, as above).
double CastInteger(Int128 v, DType as) {
  return as == DType::kFloat64 ? static_cast<double>(v) : FromFloat32(static_cast<float>(v), as);
}

// Two's complement wrap of v to the width and signedness of `dtype`.
Int128 WrapTo(Int128 v, DType dtype) {
  if (v == kUnrepresentable) return v;
  if (dtype == DType::kBool) return v != 0 ? 1 : 0;
  const int bits = static_cast<int>(DTypeSize(dtype)) * 8;
  const auto u = static_cast<UInt128>(v);
  const UInt128 mask = (static_cast<UInt128>(1) << bits) - 1;
  UInt128 low = u & mask;
  if (IsSigned(dtype) && (low >> (bits - 1)) != 0) {
    return static_cast<Int128>(low) - (static_cast<Int128>(1) << bits);
  }
  return static_cast<Int128>(low);
}

}  // namespace

ElementReader::ElementReader(const TensorView& view)
    : view_(view),
      contiguous_(view.IsCContiguous()),
      element_size_(DTypeSize(view.dtype)),
      scratch_(new ReaderScratch) {}

ElementReader::~ElementReader() { delete scratch_; }

const std::byte* ElementReader::Contiguous(std::int64_t start, std::int64_t count) {
  if (contiguous_) return view_.data + start * static_cast<std::int64_t>(element_size_);
  auto& buffer = scratch_->gathered;
  buffer.resize(static_cast<std::size_t>(count) * element_size_);
  if (count == 0) return buffer.data();
  // Walk a multi-index from `start`, carrying like an odometer.
  const std::size_t rank = view_.shape.size();
  std::vector<std::int64_t> index(rank);
  std::int64_t rest = start;
  std::int64_t offset = 0;
  for (std::size_t d = rank; d-- > 0;) {
    index[d] = rest % view_.shape[d];
    rest /= view_.shape[d];
    offset += index[d] * view_.strides[d];
  }
  for (std::int64_t i = 0; i < count; ++i) {
    std::memcpy(buffer.data() + static_cast<std::size_t>(i) * element_size_, view_.data + offset,
                element_size_);
    for (std::size_t d = rank; d-- > 0;) {
      offset += view_.strides[d];
      if (++index[d] < view_.shape[d]) break;
      offset -= index[d] * view_.strides[d];
      index[d] = 0;
    }
  }
  return buffer.data();
}

void ElementReader::ReadDoubles(std::int64_t start, std::int64_t count, DType as, double* out) {
  const std::byte* src = Contiguous(start, count);
  DecodeDoubles(view_.dtype, src, count, out);
  if (view_.dtype == as) return;
  if (IsInteger(view_.dtype) && (view_.dtype == DType::kInt64 || view_.dtype == DType::kUInt64)) {
    // int64 -> float: convert from the exact integer, not from a rounded double.
    auto& ints = scratch_->ints;
    ints.resize(static_cast<std::size_t>(count));
    ReadInts(start, count, view_.dtype, ints.data());
    for (std::int64_t i = 0; i < count; ++i) out[i] = CastInteger(ints[i], as);
    return;
  }
  for (std::int64_t i = 0; i < count; ++i) out[i] = CastFloat(out[i], as);
}

void ElementReader::ReadInts(std::int64_t start, std::int64_t count, DType as, Int128* out) {
  const std::byte* src = Contiguous(start, count);
  switch (view_.dtype) {
    case DType::kBool:
    case DType::kUInt8:
      WidenIntegersExact<std::uint8_t>(src, count, out);
      break;
    case DType::kInt8:
      WidenIntegersExact<std::int8_t>(src, count, out);
      break;
    case DType::kInt16:
      WidenIntegersExact<std::int16_t>(src, count, out);
      break;
    case DType::kUInt16:
      WidenIntegersExact<std::uint16_t>(src, count, out);
      break;
    case DType::kInt32:
      WidenIntegersExact<std::int32_t>(src, count, out);
      break;
    case DType::kUInt32:
      WidenIntegersExact<std::uint32_t>(src, count, out);
      break;
    case DType::kInt64:
      WidenIntegersExact<std::int64_t>(src, count, out);
      break;
    case DType::kUInt64:
      WidenIntegersExact<std::uint64_t>(src, count, out);
      break;
    default: {  // floats
      auto& doubles = scratch_->doubles;
      doubles.resize(static_cast<std::size_t>(count));
      DecodeDoubles(view_.dtype, src, count, doubles.data());
      for (std::int64_t i = 0; i < count; ++i) {
        const double v = doubles[static_cast<std::size_t>(i)];
        out[i] = as == DType::kBool ? (v != 0.0 || std::isnan(v) ? 1 : 0) : FloatToInt(v, as);
      }
      break;
    }
  }
  if (view_.dtype == as) {
    if (as == DType::kBool) {
      for (std::int64_t i = 0; i < count; ++i) out[i] = out[i] != 0 ? 1 : 0;
    }
    return;
  }
  for (std::int64_t i = 0; i < count; ++i) out[i] = WrapTo(out[i], as);
}

void ElementReader::ReadBits(std::int64_t start, std::int64_t count, DType as, std::uint64_t* out) {
  if (view_.dtype == as) {
    const std::byte* src = Contiguous(start, count);
    for (std::int64_t i = 0; i < count; ++i) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, src + static_cast<std::size_t>(i) * element_size_, element_size_);
      out[i] = bits;
    }
    return;
  }
  if (IsFloat(as)) {
    auto& doubles = scratch_->doubles;
    doubles.resize(static_cast<std::size_t>(count));
    ReadDoubles(start, count, as, doubles.data());
    const FloatFormat& format = FormatOf(as);
    for (std::int64_t i = 0; i < count; ++i) {
      const double v = doubles[static_cast<std::size_t>(i)];
      // torch's float -> bfloat16 gives every NaN as 0x7FC0, sign dropped.
      out[i] = as == DType::kBFloat16 && std::isnan(v) ? 0x7FC0 : EncodeFloat(v, format);
    }
    return;
  }
  auto& ints = scratch_->ints;
  ints.resize(static_cast<std::size_t>(count));
  ReadInts(start, count, as, ints.data());
  const int bits = static_cast<int>(DTypeSize(as)) * 8;
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  for (std::int64_t i = 0; i < count; ++i) {
    out[i] = static_cast<std::uint64_t>(static_cast<UInt128>(ints[static_cast<std::size_t>(i)])) & mask;
  }
}

}  // namespace opverify
