// Reads a run of elements of a TensorView, in logical C order, as doubles,
// integers or raw bits, cast to another dtype on the way when asked.
//
// Casts follow torch where torch defines them: float -> float rounds to
// nearest even (to float32 first when the target is narrower, as torch's
// 16- and 8-bit types are built from a float); int -> float rounds once from
// the exact integer; int -> int wraps modulo the width; anything -> bool is
// "non-zero" (NaN is true). float -> int truncates toward zero; a NaN, an
// infinity or a value outside the target's range (casts torch leaves
// undefined) reads as kUnrepresentable, which equals no integer.
#pragma once

#include <cstdint>

#include "runner/tensor/tensor_view.h"

namespace opverify {

__extension__ typedef __int128 Int128;  // exact integer differences

// What ReadInts gives for a float element that has no value in the integer
// dtype asked for: outside the range of every integer dtype.
constexpr Int128 kUnrepresentable = -(static_cast<Int128>(1) << 100);

// Scratch the strided path gathers into; one per thread.
struct ReaderScratch;

class ElementReader {
 public:
  // Elements per call at most.
  static constexpr std::int64_t kMaxRun = 2048;

  explicit ElementReader(const TensorView& view);
  ~ElementReader();
  ElementReader(const ElementReader&) = delete;
  ElementReader& operator=(const ElementReader&) = delete;

  // out[i] = element (start + i) cast to real float dtype `as`, as a double.
  void ReadDoubles(std::int64_t start, std::int64_t count, DType as, double* out);
  // out[i] = element (start + i) cast to integer or bool dtype `as`.
  void ReadInts(std::int64_t start, std::int64_t count, DType as, Int128* out);
  // out[i] = the raw bits of element (start + i) once cast to `as`
  // (real float, integer or bool; at most 8 bytes), zero-extended. The judge
  // compares integers with ReadInts, which marks values without bits.
  void ReadBits(std::int64_t start, std::int64_t count, DType as, std::uint64_t* out);

 private:
  // Pointer to `count` contiguous elements starting at `start`: the tensor's
  // own memory when it is C-contiguous, else a gathered copy in scratch.
  const std::byte* Contiguous(std::int64_t start, std::int64_t count);

  const TensorView& view_;
  bool contiguous_;
  std::size_t element_size_;
  ReaderScratch* scratch_;
};

}  // namespace opverify
