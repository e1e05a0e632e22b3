#include "runner/h5/h5.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

namespace opverify::h5 {
namespace {

// HDF5 prints every error stack to stderr unless told not to; the wrappers
// report errors themselves. Switched off once, when this file is loaded,
// which happens before any wrapper can run. (Serial HDF5 keeps this setting
// per process.)
[[maybe_unused]] const bool kErrorPrintingOff = H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0;

// Reads a name HDF5 writes into a caller's buffer after saying its length.
template <typename GetName>
std::string ReadName(GetName get_name) {
  const ssize_t length = get_name(nullptr, 0);
  if (length <= 0) return "";
  std::string name(static_cast<std::size_t>(length) + 1, '\0');
  get_name(name.data(), name.size());
  name.resize(static_cast<std::size_t>(length));
  return name;
}

std::string FileName(hid_t object) {
  return ReadName([object](char* out, std::size_t size) { return H5Fget_name(object, out, size); });
}

std::string ObjectPath(hid_t object) {
  return ReadName([object](char* out, std::size_t size) { return H5Iget_name(object, out, size); });
}

// "file.h5:/group/path" for `path` under `parent`.
std::string NameUnder(hid_t parent, const std::string& path) {
  if (!path.empty() && path.front() == '/') return FileName(parent) + ":" + path;
  std::string base = ObjectPath(parent);
  if (base.empty() || base.back() != '/') base += '/';
  return FileName(parent) + ":" + base + path;
}

// The description of the innermost error on HDF5's stack (where it was
// detected, the most specific), then clears the stack. Call it before any
// other HDF5 call: each one starts by clearing the stack.
std::string TakeInnermostError() {
  std::string description;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* error, void* out) -> herr_t {
        if (n == 0 && error->desc != nullptr) *static_cast<std::string*>(out) = error->desc;
        return 0;
      },
      &description);
  H5Eclear2(H5E_DEFAULT);
  return description;
}

// "<where>: <call> failed: <HDF5's reason>".
Status FailureMessage(const std::string& where, const char* call, const std::string& reason) {
  std::string message = where + ": " + call + " failed";
  if (!reason.empty()) message += ": " + reason;
  return Status::IoError(message);
}

// A failed call, with HDF5's reason for it.
Status Failure(const std::string& where, const char* call) {
  return FailureMessage(where, call, TakeInnermostError());
}

// A failed call on `object`, or on `path` under it: named after the reason
// is taken, since naming calls HDF5.
Status FailureOn(hid_t object, const char* call) {
  const std::string reason = TakeInnermostError();
  return FailureMessage(NameOf(object), call, reason);
}
Status FailureOn(hid_t parent, const std::string& path, const char* call) {
  const std::string reason = TakeInnermostError();
  return FailureMessage(NameUnder(parent, path), call, reason);
}

const char kDatatype[] = "HDF5 datatype";
const char kDataspace[] = "HDF5 dataspace";

// A link creation property list that makes missing intermediate groups.
Result<Handle> IntermediateGroupsList(const std::string& where) {
  Handle list(H5Pcreate(H5P_LINK_CREATE));
  if (!list.valid()) return Failure(where, "H5Pcreate");
  if (H5Pset_create_intermediate_group(list.id(), 1) < 0) {
    return Failure(where, "H5Pset_create_intermediate_group");
  }
  return list;
}

// `max_dims` empty: fixed at `dims`.
Result<Handle> CreateDataspace(const std::vector<hsize_t>& dims, const std::string& where,
                               const std::vector<hsize_t>& max_dims = {}) {
  Handle space(dims.empty() ? H5Screate(H5S_SCALAR)
                            : H5Screate_simple(static_cast<int>(dims.size()), dims.data(),
                                               max_dims.empty() ? nullptr : max_dims.data()));
  if (!space.valid()) return Failure(where, dims.empty() ? "H5Screate" : "H5Screate_simple");
  return space;
}

Result<Handle> CreateDatasetProperties(const DatasetOptions& options, const std::string& where) {
  Handle list(H5Pcreate(H5P_DATASET_CREATE));
  if (!list.valid()) return Failure(where, "H5Pcreate");
  if (!options.chunk.empty() &&
      H5Pset_chunk(list.id(), static_cast<int>(options.chunk.size()), options.chunk.data()) < 0) {
    return Failure(where, "H5Pset_chunk");
  }
  if (options.shuffle && H5Pset_shuffle(list.id()) < 0) return Failure(where, "H5Pset_shuffle");
  if (options.deflate_level > 0 &&
      H5Pset_deflate(list.id(), static_cast<unsigned>(options.deflate_level)) < 0) {
    return Failure(where, "H5Pset_deflate");
  }
  return list;
}

// A C string type of `size` bytes (or H5T_VARIABLE) in `charset`.
Result<Handle> StringType(std::size_t size, H5T_cset_t charset) {
  Result<Handle> copy = CopyType(H5T_C_S1);
  if (!copy.ok()) return copy.status();
  Handle type = std::move(copy).value();
  if (H5Tset_size(type.id(), size) < 0) return Failure(kDatatype, "H5Tset_size");
  if (H5Tset_cset(type.id(), charset) < 0) return Failure(kDatatype, "H5Tset_cset");
  return type;
}

// Names an attribute in messages: "file.h5:/group attribute 'name'", only
// when a message needs it: naming an object opened by address (OpenObjectAt)
// makes HDF5 search the whole file for a path to it.
class AttributeName {
 public:
  AttributeName(hid_t object, const std::string& name) : object_(object), name_(name) {}
  std::string operator()() const { return NameOf(object_) + " attribute '" + name_ + "'"; }

 private:
  hid_t object_;
  const std::string& name_;
};

// A failed call on an attribute, with HDF5's reason for it.
Status Failure(const AttributeName& where, const char* call) {
  const std::string reason = TakeInnermostError();
  return FailureMessage(where(), call, reason);
}

Result<std::string> ReadVariableString(hid_t attribute, hid_t file_type,
                                       const AttributeName& where) {
  const H5T_cset_t charset = H5Tget_cset(file_type);
  if (charset == H5T_CSET_ERROR) return Failure(where, "H5Tget_cset");
  Result<Handle> memory_type = StringType(H5T_VARIABLE, charset);
  if (!memory_type.ok()) return memory_type.status();
  char* text = nullptr;
  if (H5Aread(attribute, memory_type->id(), &text) < 0) return Failure(where, "H5Aread");
  std::string value = text != nullptr ? text : "";
  H5free_memory(text);
  return value;
}

Result<std::string> ReadFixedString(hid_t attribute, hid_t file_type, const AttributeName& where) {
  const std::size_t size = H5Tget_size(file_type);
  if (size == 0) return Failure(where, "H5Tget_size");
  std::string value(size, '\0');
  if (H5Aread(attribute, file_type, value.data()) < 0) return Failure(where, "H5Aread");
  value.resize(std::strlen(value.c_str()));
  if (H5Tget_strpad(file_type) == H5T_STR_SPACEPAD) {
    value.erase(value.find_last_not_of(' ') + 1);
  }
  return value;
}

}  // namespace

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    Close();
    id_ = std::exchange(other.id_, H5I_INVALID_HID);
  }
  return *this;
}

void Handle::Close() noexcept {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE:
      H5Fclose(id_);
      break;
    case H5I_GROUP:
      H5Gclose(id_);
      break;
    case H5I_DATASET:
      H5Dclose(id_);
      break;
    case H5I_ATTR:
      H5Aclose(id_);
      break;
    case H5I_DATATYPE:
      H5Tclose(id_);
      break;
    case H5I_DATASPACE:
      H5Sclose(id_);
      break;
    case H5I_GENPROP_LST:
      H5Pclose(id_);
      break;
    default:
      H5Idec_ref(id_);
      break;
  }
  id_ = H5I_INVALID_HID;
}

std::string NameOf(hid_t object) {
  if (H5Iget_type(object) == H5I_FILE) return FileName(object);
  return FileName(object) + ":" + ObjectPath(object);
}

Result<Handle> OpenFile(const std::string& path, FileMode mode) {
  return OpenFile(path, mode, FileOptions());
}

Result<Handle> OpenFile(const std::string& path, FileMode mode, const FileOptions& options) {
  Handle access(H5Pcreate(H5P_FILE_ACCESS));
  if (!access.valid()) return Failure(path, "H5Pcreate");
  if (!options.file_locking && H5Pset_file_locking(access.id(), 0, 1) < 0) {
    return Failure(path, "H5Pset_file_locking");
  }
  if (mode == FileMode::kTruncate || mode == FileMode::kCreateExclusive) {
    Handle file(H5Fcreate(path.c_str(), mode == FileMode::kTruncate ? H5F_ACC_TRUNC : H5F_ACC_EXCL,
                          H5P_DEFAULT, access.id()));
    if (!file.valid()) return Failure(path, "H5Fcreate");
    return file;
  }
  Handle file(H5Fopen(path.c_str(), mode == FileMode::kReadOnly ? H5F_ACC_RDONLY : H5F_ACC_RDWR,
                      access.id()));
  if (file.valid()) return file;
  Status failure = Failure(path, "H5Fopen");
  std::error_code error;
  if (!std::filesystem::exists(path, error) && !error)
    return Status::NotFound(path + ": no such file");
  if (H5Fis_hdf5(path.c_str()) == 0) return Status::InvalidInput(path + ": not an HDF5 file");
  return failure;
}

Result<Handle> CreateInMemoryFile(const std::string& name) {
  Handle access(H5Pcreate(H5P_FILE_ACCESS));
  if (!access.valid()) return Failure(name, "H5Pcreate");
  if (H5Pset_fapl_core(access.id(), 1 << 20, 0) < 0) return Failure(name, "H5Pset_fapl_core");
  Handle file(H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.id()));
  if (!file.valid()) return Failure(name, "H5Fcreate");
  return file;
}

Result<std::vector<std::byte>> FileImage(hid_t file) {
  // The image is what the driver holds: the metadata cache must be in it.
  Status flushed = FlushFile(file);
  if (!flushed.ok()) return flushed;
  const ssize_t size = H5Fget_file_image(file, nullptr, 0);
  if (size < 0) return FailureOn(file, "H5Fget_file_image");
  std::vector<std::byte> image(static_cast<std::size_t>(size));
  if (H5Fget_file_image(file, image.data(), image.size()) != size) {
    return FailureOn(file, "H5Fget_file_image");
  }
  return image;
}

Status FlushFile(hid_t object) {
  if (H5Fflush(object, H5F_SCOPE_LOCAL) < 0) return FailureOn(object, "H5Fflush");
  return Status::Ok();
}

Status SyncFile(hid_t object) {
  Status flushed = FlushFile(object);
  if (!flushed.ok()) return flushed;
  void* handle = nullptr;
  if (H5Fget_vfd_handle(object, H5P_DEFAULT, &handle) < 0 || handle == nullptr) {
    return FailureOn(object, "H5Fget_vfd_handle");
  }
  if (fsync(*static_cast<int*>(handle)) != 0) {
    return Status::IoError(NameOf(object) + ": fsync failed: " + std::strerror(errno));
  }
  return Status::Ok();
}

Result<bool> Exists(hid_t parent, const std::string& path) {
  // H5Lexists fails, rather than saying no, when a group on the way is
  // missing: ask about one link at a time, from the top.
  std::string prefix = !path.empty() && path.front() == '/' ? "/" : "";
  std::size_t begin = 0;
  while (begin < path.size()) {
    std::size_t end = path.find('/', begin);
    if (end == std::string::npos) end = path.size();
    if (end > begin) {
      prefix += path.substr(begin, end - begin);
      const htri_t exists = H5Lexists(parent, prefix.c_str(), H5P_DEFAULT);
      if (exists < 0) return FailureOn(parent, prefix, "H5Lexists");
      if (exists == 0) return false;
      prefix += '/';
    }
    begin = end + 1;
  }
  return true;
}

// NotFound "<file>:<path>: no such <kind>" when `path` names nothing.
Status RequireExists(hid_t parent, const std::string& path, const char* kind) {
  Result<bool> exists = Exists(parent, path);
  if (!exists.ok()) return exists.status();
  if (!exists.value()) return Status::NotFound(NameUnder(parent, path) + ": no such " + kind);
  return Status::Ok();
}

Status Delete(hid_t parent, const std::string& path) {
  if (H5Ldelete(parent, path.c_str(), H5P_DEFAULT) < 0) return FailureOn(parent, path, "H5Ldelete");
  return Status::Ok();
}

Result<Handle> OpenGroup(hid_t parent, const std::string& path) {
  Status found = RequireExists(parent, path, "group");
  if (!found.ok()) return found;
  Handle group(H5Gopen2(parent, path.c_str(), H5P_DEFAULT));
  if (!group.valid()) return FailureOn(parent, path, "H5Gopen2");
  return group;
}

Result<Handle> CreateGroup(hid_t parent, const std::string& path) {
  const std::string where = NameUnder(parent, path);
  Result<Handle> links = IntermediateGroupsList(where);
  if (!links.ok()) return links.status();
  Handle group(H5Gcreate2(parent, path.c_str(), links->id(), H5P_DEFAULT, H5P_DEFAULT));
  if (!group.valid()) return Failure(where, "H5Gcreate2");
  return group;
}

Result<haddr_t> ObjectAddress(hid_t object) {
  H5O_info_t info{};
  if (H5Oget_info2(object, &info, H5O_INFO_BASIC) < 0) return FailureOn(object, "H5Oget_info2");
  return info.addr;
}

Result<Handle> OpenObjectAt(hid_t file, haddr_t address) {
  Handle object(H5Oopen_by_addr(file, address));
  if (!object.valid()) {
    const std::string reason = TakeInnermostError();
    return FailureMessage(NameOf(file) + ": object at address " + std::to_string(address),
                          "H5Oopen_by_addr", reason);
  }
  return object;
}

Result<Handle> CreateDataset(hid_t parent, const std::string& path, hid_t type,
                             const std::vector<hsize_t>& dims, const DatasetOptions& options) {
  const std::string where = NameUnder(parent, path);
  if (!options.max_dims.empty() && options.max_dims.size() != dims.size()) {
    return Status::InvalidInput(where + ": max_dims has " +
                                std::to_string(options.max_dims.size()) +
                                " dimensions, the extent " + std::to_string(dims.size()));
  }
  Result<Handle> space = CreateDataspace(dims, where, options.max_dims);
  if (!space.ok()) return space.status();
  Result<Handle> links = IntermediateGroupsList(where);
  if (!links.ok()) return links.status();
  Result<Handle> properties = CreateDatasetProperties(options, where);
  if (!properties.ok()) return properties.status();
  Handle dataset(H5Dcreate2(parent, path.c_str(), type, space->id(), links->id(), properties->id(),
                            H5P_DEFAULT));
  if (!dataset.valid()) return Failure(where, "H5Dcreate2");
  return dataset;
}

Result<Handle> OpenDataset(hid_t parent, const std::string& path) {
  Status found = RequireExists(parent, path, "dataset");
  if (!found.ok()) return found;
  Handle dataset(H5Dopen2(parent, path.c_str(), H5P_DEFAULT));
  if (!dataset.valid()) return FailureOn(parent, path, "H5Dopen2");
  return dataset;
}

Result<std::vector<hsize_t>> DatasetDims(hid_t dataset) {
  Handle space(H5Dget_space(dataset));
  if (!space.valid()) return FailureOn(dataset, "H5Dget_space");
  const H5S_class_t space_class = H5Sget_simple_extent_type(space.id());
  if (space_class == H5S_NO_CLASS) return FailureOn(dataset, "H5Sget_simple_extent_type");
  if (space_class == H5S_NULL) {
    return Status::Unsupported(NameOf(dataset) + ": null dataspace (h5py.Empty) holds no array");
  }
  const int rank = H5Sget_simple_extent_ndims(space.id());
  if (rank < 0) return FailureOn(dataset, "H5Sget_simple_extent_ndims");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (H5Sget_simple_extent_dims(space.id(), dims.data(), nullptr) < 0) {
    return FailureOn(dataset, "H5Sget_simple_extent_dims");
  }
  return dims;
}

Result<DatasetStorage> DescribeStorage(hid_t dataset) {
  DatasetStorage storage;
  Handle space(H5Dget_space(dataset));
  if (!space.valid()) return FailureOn(dataset, "H5Dget_space");
  const int rank = H5Sget_simple_extent_ndims(space.id());
  if (rank < 0) return FailureOn(dataset, "H5Sget_simple_extent_ndims");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  storage.max_dims.resize(static_cast<std::size_t>(rank));
  if (H5Sget_simple_extent_dims(space.id(), dims.data(), storage.max_dims.data()) < 0) {
    return FailureOn(dataset, "H5Sget_simple_extent_dims");
  }
  Handle create(H5Dget_create_plist(dataset));
  if (!create.valid()) return FailureOn(dataset, "H5Dget_create_plist");
  storage.layout = H5Pget_layout(create.id());
  if (storage.layout < 0) return FailureOn(dataset, "H5Pget_layout");
  storage.stored_bytes = H5Dget_storage_size(dataset);
  storage.external_files = H5Pget_external_count(create.id());
  if (storage.external_files < 0) return FailureOn(dataset, "H5Pget_external_count");
  if (storage.layout != H5D_CHUNKED) return storage;
  storage.chunk.resize(static_cast<std::size_t>(rank));
  if (H5Pget_chunk(create.id(), rank, storage.chunk.data()) != rank) {
    return FailureOn(dataset, "H5Pget_chunk");
  }
  const int filters = H5Pget_nfilters(create.id());
  if (filters < 0) return FailureOn(dataset, "H5Pget_nfilters");
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0;
    std::size_t values = 0;
    unsigned filter_config = 0;
    const H5Z_filter_t filter = H5Pget_filter2(create.id(), static_cast<unsigned>(i), &flags,
                                               &values, nullptr, 0, nullptr, &filter_config);
    if (filter < 0) return FailureOn(dataset, "H5Pget_filter2");
    storage.filters.push_back(filter);
  }
  if (H5Dget_num_chunks(dataset, space.id(), &storage.stored_chunks) < 0) {
    return FailureOn(dataset, "H5Dget_num_chunks");
  }
  return storage;
}

Result<Handle> DatasetType(hid_t dataset) {
  Handle type(H5Dget_type(dataset));
  if (!type.valid()) return FailureOn(dataset, "H5Dget_type");
  return type;
}

Status ReadDataset(hid_t dataset, hid_t memory_type, void* data) {
  if (H5Dread(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    return FailureOn(dataset, "H5Dread");
  }
  return Status::Ok();
}

Status WriteDataset(hid_t dataset, hid_t memory_type, const void* data) {
  if (H5Dwrite(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    return FailureOn(dataset, "H5Dwrite");
  }
  return Status::Ok();
}

Status SetExtent(hid_t dataset, const std::vector<hsize_t>& dims) {
  if (H5Dset_extent(dataset, dims.data()) < 0) return FailureOn(dataset, "H5Dset_extent");
  return Status::Ok();
}

Status WriteDatasetBlock(hid_t dataset, hid_t memory_type, const std::vector<hsize_t>& start,
                         const std::vector<hsize_t>& count, const void* data) {
  Handle file_space(H5Dget_space(dataset));
  if (!file_space.valid()) return FailureOn(dataset, "H5Dget_space");
  if (H5Sselect_hyperslab(file_space.id(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                          nullptr) < 0) {
    return FailureOn(dataset, "H5Sselect_hyperslab");
  }
  Handle memory_space(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr));
  if (!memory_space.valid()) return FailureOn(dataset, "H5Screate_simple");
  // A type conversion buffer near the size of the block: HDF5's default is
  // 1 MiB (twice, with the background buffer), zero-filled on every write,
  // which dominates writing one table row. Conversions through variable-length
  // members need more than either type's size: 4x, and at least 4 KiB.
  hsize_t elements = 1;
  for (hsize_t extent : count) elements *= extent;
  const std::size_t buffer_bytes = std::clamp<std::size_t>(
      4 * elements * std::max<std::size_t>(H5Tget_size(memory_type), 1), 4096, 1 << 20);
  Handle transfer(H5Pcreate(H5P_DATASET_XFER));
  if (!transfer.valid()) return FailureOn(dataset, "H5Pcreate");
  if (H5Pset_buffer(transfer.id(), buffer_bytes, nullptr, nullptr) < 0) {
    return FailureOn(dataset, "H5Pset_buffer");
  }
  if (H5Dwrite(dataset, memory_type, memory_space.id(), file_space.id(), transfer.id(), data) < 0) {
    return FailureOn(dataset, "H5Dwrite");
  }
  return Status::Ok();
}

Status CreateExternalLink(hid_t parent, const std::string& path, const std::string& file,
                          const std::string& object) {
  const std::string where = NameUnder(parent, path);
  Result<Handle> links = IntermediateGroupsList(where);
  if (!links.ok()) return links.status();
  if (H5Lcreate_external(file.c_str(), object.c_str(), parent, path.c_str(), links->id(),
                         H5P_DEFAULT) < 0) {
    return Failure(where, "H5Lcreate_external");
  }
  return Status::Ok();
}

namespace {

// Removes the attribute if it is there, so that it can be created anew.
Status RemoveAttribute(hid_t object, const std::string& name, const AttributeName& where) {
  const htri_t exists = H5Aexists(object, name.c_str());
  if (exists < 0) return Failure(where, "H5Aexists");
  if (exists > 0 && H5Adelete(object, name.c_str()) < 0) return Failure(where, "H5Adelete");
  return Status::Ok();
}

// An attribute holding one value, and its stored type.
struct ScalarAttribute {
  Handle attribute;
  Handle type;
};

// Opens the attribute, checked to hold one value of `type_class` (else
// InvalidInput "<where> is not one <what>"); nullopt when absent.
Result<std::optional<ScalarAttribute>> OpenScalarAttribute(hid_t object, const std::string& name,
                                                           const AttributeName& where,
                                                           H5T_class_t type_class,
                                                           const char* what) {
  const htri_t exists = H5Aexists(object, name.c_str());
  if (exists < 0) return Failure(where, "H5Aexists");
  if (exists == 0) return std::optional<ScalarAttribute>();
  ScalarAttribute scalar;
  scalar.attribute = Handle(H5Aopen(object, name.c_str(), H5P_DEFAULT));
  if (!scalar.attribute.valid()) return Failure(where, "H5Aopen");
  scalar.type = Handle(H5Aget_type(scalar.attribute.id()));
  if (!scalar.type.valid()) return Failure(where, "H5Aget_type");
  Handle space(H5Aget_space(scalar.attribute.id()));
  if (!space.valid()) return Failure(where, "H5Aget_space");
  if (H5Tget_class(scalar.type.id()) != type_class ||
      H5Sget_simple_extent_npoints(space.id()) != 1) {
    return Status::InvalidInput(where() + " is not one " + what);
  }
  return std::optional<ScalarAttribute>(std::move(scalar));
}

// Replaces attribute `name` of `object` by one scalar of `file_type`, written
// from `value` of `memory_type`.
Status WriteScalarAttribute(hid_t object, const std::string& name, hid_t file_type,
                            hid_t memory_type, const void* value) {
  const AttributeName where(object, name);
  Status removed = RemoveAttribute(object, name, where);
  if (!removed.ok()) return removed;
  Result<Handle> space = CreateDataspace({}, kDataspace);
  if (!space.ok()) return space.status();
  Handle attribute(
      H5Acreate2(object, name.c_str(), file_type, space->id(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attribute.valid()) return Failure(where, "H5Acreate2");
  if (H5Awrite(attribute.id(), memory_type, value) < 0) return Failure(where, "H5Awrite");
  return Status::Ok();
}

}  // namespace

Status WriteStringAttribute(hid_t object, const std::string& name, const std::string& value) {
  Result<Handle> type = StringType(H5T_VARIABLE, H5T_CSET_UTF8);
  if (!type.ok()) return type.status();
  const char* text = value.c_str();
  return WriteScalarAttribute(object, name, type->id(), type->id(), &text);
}

Result<std::optional<std::string>> ReadStringAttribute(hid_t object, const std::string& name) {
  const AttributeName where(object, name);
  Result<std::optional<ScalarAttribute>> scalar =
      OpenScalarAttribute(object, name, where, H5T_STRING, "string");
  if (!scalar.ok()) return scalar.status();
  if (!scalar.value()) return std::optional<std::string>();
  const hid_t attribute = scalar.value()->attribute.id();
  const hid_t type = scalar.value()->type.id();
  const htri_t variable = H5Tis_variable_str(type);
  if (variable < 0) return Failure(where, "H5Tis_variable_str");
  Result<std::string> value = variable > 0 ? ReadVariableString(attribute, type, where)
                                           : ReadFixedString(attribute, type, where);
  if (!value.ok()) return value.status();
  return std::optional<std::string>(std::move(value).value());
}

Status WriteIntAttribute(hid_t object, const std::string& name, std::int64_t value) {
  return WriteScalarAttribute(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

Result<std::optional<std::int64_t>> ReadIntAttribute(hid_t object, const std::string& name) {
  const AttributeName where(object, name);
  Result<std::optional<ScalarAttribute>> scalar =
      OpenScalarAttribute(object, name, where, H5T_INTEGER, "integer");
  if (!scalar.ok()) return scalar.status();
  if (!scalar.value()) return std::optional<std::int64_t>();
  std::int64_t value = 0;
  if (H5Aread(scalar.value()->attribute.id(), H5T_NATIVE_INT64, &value) < 0) {
    return Failure(where, "H5Aread");
  }
  return std::optional<std::int64_t>(value);
}

Result<TypeInfo> DescribeType(hid_t type) {
  TypeInfo info;
  info.type_class = H5Tget_class(type);
  if (info.type_class == H5T_NO_CLASS) return Failure(kDatatype, "H5Tget_class");
  info.size = H5Tget_size(type);
  if (info.size == 0) return Failure(kDatatype, "H5Tget_size");
  if (info.type_class == H5T_INTEGER) {
    const H5T_sign_t sign = H5Tget_sign(type);
    if (sign == H5T_SGN_ERROR) return Failure(kDatatype, "H5Tget_sign");
    info.is_signed = sign == H5T_SGN_2;
  }
  return info;
}

Result<Handle> CopyType(hid_t type) {
  Handle copy(H5Tcopy(type));
  if (!copy.valid()) return Failure(kDatatype, "H5Tcopy");
  return copy;
}

std::string TypeClassName(H5T_class_t type_class) {
  switch (type_class) {
    case H5T_INTEGER:
      return "integer";
    case H5T_FLOAT:
      return "float";
    case H5T_TIME:
      return "time";
    case H5T_STRING:
      return "string";
    case H5T_BITFIELD:
      return "bitfield";
    case H5T_OPAQUE:
      return "opaque";
    case H5T_COMPOUND:
      return "compound";
    case H5T_REFERENCE:
      return "reference";
    case H5T_ENUM:
      return "enum";
    case H5T_VLEN:
      return "variable-length";
    case H5T_ARRAY:
      return "array";
    default:
      return "unknown";
  }
}

Result<bool> TypesEqual(hid_t a, hid_t b) {
  const htri_t equal = H5Tequal(a, b);
  if (equal < 0) return Failure(kDatatype, "H5Tequal");
  return equal > 0;
}

Result<Handle> CreateCompoundType(std::size_t size, const std::vector<CompoundMember>& members) {
  Handle type(H5Tcreate(H5T_COMPOUND, size));
  if (!type.valid()) return Failure(kDatatype, "H5Tcreate");
  for (const CompoundMember& member : members) {
    if (H5Tinsert(type.id(), member.name.c_str(), member.offset, member.type) < 0) {
      return Failure(kDatatype, "H5Tinsert");
    }
  }
  return type;
}

Result<std::vector<CompoundMemberInfo>> CompoundMembers(hid_t compound) {
  const int count = H5Tget_nmembers(compound);
  if (count < 0) return Failure(kDatatype, "H5Tget_nmembers");
  std::vector<CompoundMemberInfo> members;
  for (unsigned i = 0; i < static_cast<unsigned>(count); ++i) {
    char* name = H5Tget_member_name(compound, i);
    if (name == nullptr) return Failure(kDatatype, "H5Tget_member_name");
    CompoundMemberInfo member;
    member.name = name;
    H5free_memory(name);
    Handle member_type(H5Tget_member_type(compound, i));
    if (!member_type.valid()) return Failure(kDatatype, "H5Tget_member_type");
    Result<TypeInfo> info = DescribeType(member_type.id());
    if (!info.ok()) return info.status();
    member.type = info.value();
    members.push_back(std::move(member));
  }
  return members;
}

Result<Handle> CreateEnumType(hid_t base, const std::vector<EnumMember>& members) {
  Handle type(H5Tenum_create(base));
  if (!type.valid()) return Failure(kDatatype, "H5Tenum_create");
  for (const EnumMember& member : members) {
    // H5Tenum_insert takes the value in the base type: convert it there.
    std::int64_t value = member.value;
    if (H5Tconvert(H5T_NATIVE_INT64, base, 1, &value, nullptr, H5P_DEFAULT) < 0) {
      return Failure(kDatatype, "H5Tconvert");
    }
    if (H5Tenum_insert(type.id(), member.name.c_str(), &value) < 0) {
      return Failure(kDatatype, "H5Tenum_insert");
    }
  }
  return type;
}

Result<Handle> Float16Type() {
  // h5py's recipe: a float32 narrowed to sign bit 15, exponent bits 10-14,
  // mantissa bits 0-9, exponent bias 15.
  Result<Handle> copy = CopyType(H5T_NATIVE_FLOAT);
  if (!copy.ok()) return copy.status();
  Handle type = std::move(copy).value();
  if (H5Tset_fields(type.id(), 15, 10, 5, 0, 10) < 0) return Failure(kDatatype, "H5Tset_fields");
  if (H5Tset_size(type.id(), 2) < 0) return Failure(kDatatype, "H5Tset_size");
  if (H5Tset_ebias(type.id(), 15) < 0) return Failure(kDatatype, "H5Tset_ebias");
  return type;
}

Result<Handle> VariableStringType() { return StringType(H5T_VARIABLE, H5T_CSET_UTF8); }

}  // namespace opverify::h5
