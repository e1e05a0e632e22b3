#include "runner/tensor_io/h5_tensor.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <vector>

#include "runner/common/user_file.h"
#include "runner/h5/h5.h"

namespace opverify {
namespace {

// Names the logical dtype of data stored as raw integers (bfloat16, float8).
constexpr char kDTypeAttribute[] = "dtype";

// Dtypes stored as HDF5 integers or floats, matched by class, size and sign.
constexpr std::array<DType, 11> kNumericDTypes = {DType::kInt8,    DType::kInt16,  DType::kInt32,
                                                  DType::kInt64,   DType::kUInt8,  DType::kUInt16,
                                                  DType::kUInt32,  DType::kUInt64, DType::kFloat16,
                                                  DType::kFloat32, DType::kFloat64};

// The native HDF5 type of an integer, float32 or float64; none for others.
hid_t NativeType(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
      return H5T_NATIVE_INT8;
    case DType::kInt16:
      return H5T_NATIVE_INT16;
    case DType::kInt32:
      return H5T_NATIVE_INT32;
    case DType::kInt64:
      return H5T_NATIVE_INT64;
    case DType::kUInt8:
      return H5T_NATIVE_UINT8;
    case DType::kUInt16:
      return H5T_NATIVE_UINT16;
    case DType::kUInt32:
      return H5T_NATIVE_UINT32;
    case DType::kUInt64:
      return H5T_NATIVE_UINT64;
    case DType::kFloat32:
      return H5T_NATIVE_FLOAT;
    case DType::kFloat64:
      return H5T_NATIVE_DOUBLE;
    default:
      return H5I_INVALID_HID;
  }
}

// The HDF5 type that holds `dtype` in memory, in h5py's layout; the writer
// also uses it as the file type. bfloat16 and float8 are their storage.
Result<h5::Handle> MemoryType(DType dtype) {
  const DType stored = StorageDType(dtype);
  switch (stored) {
    case DType::kBool:
      return h5::CreateEnumType(H5T_NATIVE_INT8, {{"FALSE", 0}, {"TRUE", 1}});
    case DType::kComplex64:
    case DType::kComplex128: {
      const hid_t part = NativeType(ComplexPart(stored));
      const std::size_t part_size = DTypeSize(ComplexPart(stored));
      return h5::CreateCompoundType(2 * part_size, {{"r", 0, part}, {"i", part_size, part}});
    }
    case DType::kFloat16:
      return h5::Float16Type();
    default:
      return h5::CopyType(NativeType(stored));
  }
}

// h5py's complex: a compound of two float32 or two float64 named r and i.
Result<bool> IsH5pyComplex(hid_t type, std::size_t size) {
  if (size != 8 && size != 16) return false;
  Result<std::vector<h5::CompoundMemberInfo>> members = h5::CompoundMembers(type);
  if (!members.ok()) return members.status();
  const auto is_part = [&](const h5::CompoundMemberInfo& member, const char* name) {
    return member.name == name && member.type.type_class == H5T_FLOAT &&
           member.type.size * 2 == size;
  };
  return members->size() == 2 && is_part(members.value()[0], "r") &&
         is_part(members.value()[1], "i");
}

// The dtype of data stored as `file_type`, or Unsupported naming the type.
Result<DType> StoredDType(hid_t file_type, const std::string& source) {
  Result<h5::TypeInfo> info = h5::DescribeType(file_type);
  if (!info.ok()) return info.status();
  const std::string type_name =
      h5::TypeClassName(info->type_class) + " of " + std::to_string(info->size) + " bytes";
  switch (info->type_class) {
    case H5T_INTEGER:
    case H5T_FLOAT: {
      // Any 2-byte float is read as IEEE binary16 (HDF5 converts).
      const bool is_float = info->type_class == H5T_FLOAT;
      for (DType dtype : kNumericDTypes) {
        if (IsFloat(dtype) == is_float && DTypeSize(dtype) == info->size &&
            (is_float || IsSigned(dtype) == info->is_signed)) {
          return dtype;
        }
      }
      break;
    }
    case H5T_ENUM: {
      Result<h5::Handle> bool_type = MemoryType(DType::kBool);
      if (!bool_type.ok()) return bool_type.status();
      Result<bool> is_bool = h5::TypesEqual(file_type, bool_type->id());
      if (!is_bool.ok()) return is_bool.status();
      if (is_bool.value()) return DType::kBool;
      return Status::Unsupported(source +
                                 ": unsupported HDF5 type: an enum other than h5py's bool");
    }
    case H5T_COMPOUND: {
      Result<bool> is_complex = IsH5pyComplex(file_type, info->size);
      if (!is_complex.ok()) return is_complex.status();
      if (is_complex.value()) return info->size == 8 ? DType::kComplex64 : DType::kComplex128;
      return Status::Unsupported(source + ": unsupported HDF5 type: a " + type_name +
                                 " other than h5py's complex {r, i}");
    }
    default:
      break;
  }
  return Status::Unsupported(source + ": unsupported HDF5 type: " + type_name);
}

// The logical dtype to read as: the `dtype` attribute's, or `asked`; both
// given, they must agree.
Result<std::optional<DType>> LogicalDType(const std::optional<std::string>& attribute,
                                          std::optional<DType> asked, const std::string& source) {
  if (!attribute) return asked;
  const std::optional<DType> named = ParseDType(*attribute);
  if (!named) {
    return Status::InvalidInput(source + ": its dtype attribute names no known dtype: '" +
                                *attribute + "'");
  }
  if (asked && *asked != *named) {
    return Status::InvalidInput(source + ": asked to read it as " + std::string(DTypeName(*asked)) +
                                ", but its dtype attribute says " + *attribute);
  }
  return named;
}

std::string DimsText(const std::vector<hsize_t>& dims) {
  std::string text = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + ")";
}

// zlib's deflate expands no stream by more than this: the bound on what a
// chunked dataset filtered only by deflate, shuffle and fletcher32 can hold.
constexpr std::uintmax_t kDeflateMaxRatio = 1032;

// Whether the file holds the `bytes` its extent claims, checked before they
// are allocated: a crafted file of a few kB can claim gigabytes (its extent
// past its maximum, or chunks it never stored, which read as fill value).
Status CheckStored(const h5::DatasetStorage& storage, const std::vector<hsize_t>& dims,
                   std::uintmax_t bytes, std::uintmax_t file_bytes, const std::string& source) {
  for (std::size_t i = 0; i < dims.size() && i < storage.max_dims.size(); ++i) {
    if (storage.max_dims[i] != H5S_UNLIMITED && dims[i] > storage.max_dims[i]) {
      return Status::InvalidInput(source + ": its extent " + DimsText(dims) +
                                  " passes its maximum " + DimsText(storage.max_dims) +
                                  ": the file is corrupt");
    }
  }
  // Data in other files (a virtual dataset's sources, external storage) is
  // not this file's to hold: checked against memory only.
  if (bytes == 0 || storage.layout == H5D_VIRTUAL || storage.external_files > 0)
    return Status::Ok();
  const std::string needs =
      ": its shape " + DimsText(dims) + " needs " + std::to_string(bytes) + " bytes";
  if (storage.stored_bytes == 0) {
    return Status::InvalidInput(source + needs +
                                " and none are stored (a dataset never written reads as its "
                                "fill value): the file is corrupt or was written in part");
  }
  if (storage.layout != H5D_CHUNKED) {
    if (bytes <= file_bytes) return Status::Ok();
    return Status::InvalidInput(source + needs + ", more than the whole file holds (" +
                                std::to_string(file_bytes) + "): it is truncated or corrupt");
  }
  std::uintmax_t chunks = 1;
  for (std::size_t i = 0; i < dims.size() && i < storage.chunk.size(); ++i) {
    if (storage.chunk[i] == 0)
      return Status::InvalidInput(source + ": a chunk extent is 0: the file is corrupt");
    chunks *= (dims[i] + storage.chunk[i] - 1) / storage.chunk[i];
  }
  if (storage.stored_chunks < chunks) {
    return Status::InvalidInput(source + needs + " in " + std::to_string(chunks) +
                                " chunks, and only " + std::to_string(storage.stored_chunks) +
                                " are stored (the rest would read as fill value): the file is "
                                "corrupt or was written in part");
  }
  std::uintmax_t ratio = 1;
  for (H5Z_filter_t filter : storage.filters) {
    if (filter == H5Z_FILTER_DEFLATE) {
      ratio = kDeflateMaxRatio;
    } else if (filter != H5Z_FILTER_SHUFFLE && filter != H5Z_FILTER_FLETCHER32) {
      return Status::Ok();  // no bound known: the extent is checked against memory only
    }
  }
  if (bytes / ratio <= storage.stored_bytes) return Status::Ok();
  return Status::InvalidInput(
      source + needs + ", and its " + std::to_string(storage.stored_bytes) + " stored bytes " +
      (ratio == 1
           ? std::string("are not compressed")
           : "cannot inflate to more than " + std::to_string(kDeflateMaxRatio) + " times that") +
      ": the file is corrupt");
}

}  // namespace

Result<LoadedTensor> ReadH5Dataset(const std::string& file, const std::string& dataset,
                                   std::optional<DType> logical_dtype) {
  const std::string source = file + ":" + dataset;
  if (Status regular = CheckRegularFile(file, "HDF5 file"); !regular.ok()) return regular;
  Result<h5::Handle> h5_file = h5::OpenFile(file, h5::FileMode::kReadOnly);
  if (!h5_file.ok()) return h5_file.status();
  Result<h5::Handle> h5_dataset = h5::OpenDataset(h5_file->id(), dataset);
  if (!h5_dataset.ok()) return h5_dataset.status();
  const hid_t id = h5_dataset->id();
  Result<std::vector<hsize_t>> dims = h5::DatasetDims(id);
  if (!dims.ok()) return dims.status();
  Result<h5::Handle> file_type = h5::DatasetType(id);
  if (!file_type.ok()) return file_type.status();
  Result<DType> stored = StoredDType(file_type->id(), source);
  if (!stored.ok()) return stored.status();
  Result<std::optional<std::string>> attribute = h5::ReadStringAttribute(id, kDTypeAttribute);
  if (!attribute.ok()) return attribute.status();
  Result<std::optional<DType>> logical = LogicalDType(attribute.value(), logical_dtype, source);
  if (!logical.ok()) return logical.status();

  // A crafted file can claim any extent: the product is checked for
  // overflow and against this machine's memory before anything is allocated.
  const std::size_t memory = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
                             static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::size_t bytes = DTypeSize(stored.value());
  for (hsize_t extent : dims.value()) {
    if (extent != 0 && bytes > std::numeric_limits<std::size_t>::max() / extent) {
      return Status::InvalidInput(source + ": its shape " + DimsText(dims.value()) + " overflows");
    }
    bytes *= extent;
  }
  if (bytes > memory) {
    return Status::InvalidInput(source + ": its shape " + DimsText(dims.value()) + " needs " +
                                std::to_string(bytes) + " bytes, more than this machine's " +
                                std::to_string(memory));
  }
  Result<h5::DatasetStorage> storage = h5::DescribeStorage(id);
  if (!storage.ok()) return storage.status();
  struct stat file_info {};
  if (::stat(file.c_str(), &file_info) != 0)
    return Status::IoError(file + ": cannot stat: " + std::strerror(errno));
  if (Status held = CheckStored(storage.value(), dims.value(), bytes,
                                static_cast<std::uintmax_t>(file_info.st_size), source);
      !held.ok()) {
    return held;
  }
  std::shared_ptr<std::vector<std::byte>> buffer;
  try {
    buffer = std::make_shared<std::vector<std::byte>>(bytes);
  } catch (const std::bad_alloc&) {
    return Status::IoError(source + ": cannot allocate " + std::to_string(bytes) + " bytes");
  }
  if (bytes > 0) {
    Result<h5::Handle> memory_type = MemoryType(stored.value());
    if (!memory_type.ok()) return memory_type.status();
    Status status = h5::ReadDataset(id, memory_type->id(), buffer->data());
    if (!status.ok()) return status;
  }
  LoadedTensor tensor;
  tensor.view = TensorView::Contiguous(
      stored.value(), std::vector<std::int64_t>(dims->begin(), dims->end()), buffer->data());
  tensor.owner = std::move(buffer);
  tensor.source = source;
  if (logical.value()) {
    Status status = ApplyLogicalDType(&tensor.view, *logical.value(), source);
    if (!status.ok()) return status;
  }
  return tensor;
}

Status WriteH5Dataset(const h5::Handle& parent, const std::string& dataset, const TensorView& view,
                      const h5::DatasetOptions& options) {
  Result<h5::Handle> type = MemoryType(view.dtype);
  if (!type.ok()) return type.status();
  Result<bool> exists = h5::Exists(parent.id(), dataset);
  if (!exists.ok()) return exists.status();
  if (exists.value()) {
    Status status = h5::Delete(parent.id(), dataset);
    if (!status.ok()) return status;
  }
  const std::vector<hsize_t> dims(view.shape.begin(), view.shape.end());
  Result<h5::Handle> h5_dataset = h5::CreateDataset(parent.id(), dataset, type->id(), dims, options);
  if (!h5_dataset.ok()) return h5_dataset.status();
  if (view.NumElements() > 0) {
    std::vector<std::byte> scratch;
    Status status =
        h5::WriteDataset(h5_dataset->id(), type->id(), CContiguousBytes(view, &scratch));
    if (!status.ok()) return status;
  }
  if (StorageDType(view.dtype) != view.dtype) {
    return h5::WriteStringAttribute(h5_dataset->id(), kDTypeAttribute,
                                    std::string(DTypeName(view.dtype)));
  }
  return Status::Ok();
}

}  // namespace opverify
