#include "runner/tensor_io/tensor_file.h"

#include <cstring>

#include "runner/tensor_io/h5_tensor.h"
#include "runner/tensor_io/isolated_read.h"
#include "runner/tensor_io/npy.h"

namespace opverify {
namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Whether raw `stored` elements may be read as `logical` ones: same width,
// and `stored` is the raw integer a file keeps `logical` in.
bool IsReinterpretable(DType stored, DType logical) {
  switch (logical) {
    case DType::kBFloat16:
    case DType::kFloat16:
      return stored == DType::kUInt16;
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2:
      return stored == DType::kUInt8;
    case DType::kComplex32:
      return stored == DType::kUInt32;
    default:
      return false;
  }
}

}  // namespace

Result<LoadedTensor> ReadTensorFile(const std::string& spec, std::optional<DType> logical_dtype,
                                    std::chrono::milliseconds reader_idle_limit) {
  const std::size_t split = spec.rfind(":/");
  if (split != std::string::npos) {
    // libhdf5 can crash on a corrupt file (isolated_read.h): read it in a child.
    const std::string file = spec.substr(0, split);
    const std::string dataset = spec.substr(split + 1);
    return ReadInChild(
        spec, [&] { return ReadH5Dataset(file, dataset, logical_dtype); }, reader_idle_limit);
  }
  if (EndsWith(spec, ".h5") || EndsWith(spec, ".hdf5")) {
    return Status::InvalidInput(spec + ": name the dataset as FILE.h5:/path/to/dataset");
  }
  return ReadNpy(spec, logical_dtype);
}

Status ApplyLogicalDType(TensorView* view, DType logical, const std::string& source) {
  if (view->dtype == logical) return Status::Ok();
  if (!IsReinterpretable(view->dtype, logical)) {
    return Status::InvalidInput(source + ": cannot read " + std::string(DTypeName(view->dtype)) +
                                " data as " + std::string(DTypeName(logical)));
  }
  view->dtype = logical;
  return Status::Ok();
}

DType StorageDType(DType dtype) {
  switch (dtype) {
    case DType::kBFloat16:
      return DType::kUInt16;
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2:
      return DType::kUInt8;
    case DType::kComplex32:  // numpy and h5py have none: its 4 bytes, as bfloat16's 2
      return DType::kUInt32;
    default:
      return dtype;
  }
}

const std::byte* CContiguousBytes(const TensorView& view, std::vector<std::byte>* scratch) {
  if (view.IsCContiguous()) return view.data;
  const std::size_t element_size = DTypeSize(view.dtype);
  const std::int64_t count = view.NumElements();
  scratch->resize(static_cast<std::size_t>(count) * element_size);
  for (std::int64_t i = 0; i < count; ++i) {
    std::memcpy(scratch->data() + static_cast<std::size_t>(i) * element_size, view.ElementAt(i),
                element_size);
  }
  return scratch->data();
}

}  // namespace opverify
