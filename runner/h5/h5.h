// The one place HDF5's C API is called: an RAII handle for HDF5 identifiers
// and one thin checked wrapper per call we use (after HighFive's
// include/highfive/bits/*_wrapper.hpp).
//
// A failing call comes back as a Status whose message names the file and
// object, the HDF5 call, and HDF5's own innermost description of the error
// ("/tmp/a.h5:/x/y: H5Dopen2 failed: not a dataset"). HDF5's automatic
// printing of its error stack to stderr is switched off once, when this
// library is loaded.
//
// Paths are HDF5 link paths relative to `parent`, which may be a file or a
// group ("/a/b" from a file, "b/c" from a group).
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/status.h"

namespace opverify::h5 {

// Owns one HDF5 identifier (file, group, dataset, attribute, datatype,
// dataspace or property list) and closes it with the matching H5*close.
// Move-only; closing never throws (a failed close is ignored: there is no
// one to tell from a destructor).
class Handle {
 public:
  Handle() = default;
  // Takes `id`, as an H5*create/open call returned it (negative: invalid).
  explicit Handle(hid_t id) : id_(id) {}
  ~Handle() { Close(); }
  Handle(Handle&& other) noexcept : id_(other.id_) { other.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t id() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  void Close() noexcept;
  hid_t id_ = H5I_INVALID_HID;
};

// "file.h5" for a file, "file.h5:/group/object" for anything in one.
std::string NameOf(hid_t object);

// --- Files ---------------------------------------------------------------

enum class FileMode {
  kReadOnly,
  kReadWrite,
  kTruncate,         // create, replacing any file already there
  kCreateExclusive,  // create; an IoError when a file is already there (H5F_ACC_EXCL)
};

// How a file is opened, beyond its mode.
struct FileOptions {
  // false: no flock() on the file (H5Pset_file_locking, HDF5 1.10.7+), as
  // HDF5_USE_FILE_LOCKING=FALSE does: for reading a file another process
  // still holds, or one on a file system where flock fails.
  bool file_locking = true;
};

// A missing file is NotFound; a file that is not HDF5 is InvalidInput.
Result<Handle> OpenFile(const std::string& path, FileMode mode);
Result<Handle> OpenFile(const std::string& path, FileMode mode, const FileOptions& options);

// A new file held in memory only (the core driver, no backing store),
// named `name` in messages. Built whole, then written out from FileImage by
// the caller, so no HDF5 write can fail half way through on a full disk.
Result<Handle> CreateInMemoryFile(const std::string& name);
// The bytes of an open file, as they would be on disk: flushed, then
// H5Fget_file_image.
Result<std::vector<std::byte>> FileImage(hid_t file);

// H5Fflush(H5F_SCOPE_LOCAL): every change made through `object`'s file is in
// the operating system's hands (it survives the process, not the machine).
Status FlushFile(hid_t object);
// FlushFile, then fsync() of the file's descriptor (sec2 driver, the
// default): the changes survive a crash of the machine too.
Status SyncFile(hid_t object);

// --- Links, groups, datasets ---------------------------------------------

// Whether `path` names an object; false, not an error, when a group on the
// way is missing.
Result<bool> Exists(hid_t parent, const std::string& path);
Status Delete(hid_t parent, const std::string& path);

// A missing group is NotFound.
Result<Handle> OpenGroup(hid_t parent, const std::string& path);
// Creates the group and any missing groups above it; an existing group is
// an error.
Result<Handle> CreateGroup(hid_t parent, const std::string& path);

// The address of an object's header in its file: fixed for the object's
// life, so it reaches the object even when a group on its path is damaged.
Result<haddr_t> ObjectAddress(hid_t object);
// Opens the group, dataset or named datatype whose header is at `address`.
Result<Handle> OpenObjectAt(hid_t file, haddr_t address);

// Storage of a new dataset. Shuffle and deflate need chunks.
struct DatasetOptions {
  std::vector<hsize_t> chunk;  // empty: contiguous
  // Largest extent, one per dimension (H5S_UNLIMITED allowed: needs chunks);
  // empty: the extent is fixed.
  std::vector<hsize_t> max_dims;
  bool shuffle = false;
  int deflate_level = 0;  // 0: no deflate; 1-9: zlib level
};

// Creates a dataset of `type` and extent `dims` (empty: a scalar), and any
// missing groups above it.
Result<Handle> CreateDataset(hid_t parent, const std::string& path, hid_t type,
                             const std::vector<hsize_t>& dims, const DatasetOptions& options = {});
// A missing dataset is NotFound.
Result<Handle> OpenDataset(hid_t parent, const std::string& path);

// Extent of a dataset: empty for a scalar. A null dataspace (no elements, no
// shape: h5py.Empty) is Unsupported.
Result<std::vector<hsize_t>> DatasetDims(hid_t dataset);
// The dataset's stored (file) datatype.
Result<Handle> DatasetType(hid_t dataset);

// How a dataset is laid out in its file: what a reader checks before it
// allocates what the extent claims (a crafted file can claim any extent).
struct DatasetStorage {
  H5D_layout_t layout = H5D_CONTIGUOUS;
  std::vector<hsize_t> max_dims;      // H5S_UNLIMITED where unlimited
  std::vector<hsize_t> chunk;         // chunked layout only
  std::vector<H5Z_filter_t> filters;  // in pipeline order; chunked only
  hsize_t stored_bytes = 0;           // H5Dget_storage_size: 0 when never written
  hsize_t stored_chunks = 0;          // chunked only: chunks present in the file
  int external_files = 0;             // contiguous data kept in other files (h5py's external=)
};
Result<DatasetStorage> DescribeStorage(hid_t dataset);

// The whole dataset, converted by HDF5 between its file type and
// `memory_type`. `data` holds every element.
Status ReadDataset(hid_t dataset, hid_t memory_type, void* data);
Status WriteDataset(hid_t dataset, hid_t memory_type, const void* data);

// Changes the extent of a chunked dataset (H5Dset_extent), within its max_dims.
Status SetExtent(hid_t dataset, const std::vector<hsize_t>& dims);
// Writes the block of `count` elements per dimension starting at `start`;
// `data` holds the block in C order.
Status WriteDatasetBlock(hid_t dataset, hid_t memory_type, const std::vector<hsize_t>& start,
                         const std::vector<hsize_t>& count, const void* data);

// An external link at `path` to `object` (absolute) in `file`. A relative
// `file` is found relative to the directory of the file holding the link
// (after HDF5_EXT_PREFIX), so a folder of linked files can be moved whole.
Status CreateExternalLink(hid_t parent, const std::string& path, const std::string& file,
                          const std::string& object);

// --- Attributes -----------------------------------------------------------

// Writes (or replaces) a scalar variable-length UTF-8 string attribute.
Status WriteStringAttribute(hid_t object, const std::string& name, const std::string& value);
// A scalar string attribute, fixed or variable length; nullopt when absent.
// An attribute that is not one string is InvalidInput.
Result<std::optional<std::string>> ReadStringAttribute(hid_t object, const std::string& name);
// Writes (or replaces) a scalar 64-bit signed integer attribute.
Status WriteIntAttribute(hid_t object, const std::string& name, std::int64_t value);
// A scalar integer attribute (any integer type), converted to int64;
// nullopt when absent. An attribute that is not one integer is InvalidInput.
Result<std::optional<std::int64_t>> ReadIntAttribute(hid_t object, const std::string& name);

// --- Datatypes ------------------------------------------------------------
// Predefined types (H5T_NATIVE_FLOAT, ...) are used as plain ids; the types
// made here are owned Handles.

struct TypeInfo {
  H5T_class_t type_class = H5T_NO_CLASS;
  std::size_t size = 0;    // bytes
  bool is_signed = false;  // integers only
};
Result<TypeInfo> DescribeType(hid_t type);
// An owned copy of `type` (a predefined type made a Handle).
Result<Handle> CopyType(hid_t type);
// "integer", "float", "string", "compound", ... for messages.
std::string TypeClassName(H5T_class_t type_class);
Result<bool> TypesEqual(hid_t a, hid_t b);

struct CompoundMember {
  std::string name;
  std::size_t offset = 0;
  hid_t type = H5I_INVALID_HID;  // borrowed: kept alive by the caller
};
struct CompoundMemberInfo {
  std::string name;
  TypeInfo type;
};
Result<Handle> CreateCompoundType(std::size_t size, const std::vector<CompoundMember>& members);
Result<std::vector<CompoundMemberInfo>> CompoundMembers(hid_t compound);

struct EnumMember {
  std::string name;
  std::int64_t value = 0;
};
// An enum over the native integer `base` (values are converted to it).
Result<Handle> CreateEnumType(hid_t base, const std::vector<EnumMember>& members);

// IEEE 754 binary16 in the machine's byte order, as h5py writes float16
// (HDF5 1.10 predefines no 16-bit float).
Result<Handle> Float16Type();

// A variable-length UTF-8 string (char* in memory), as h5py writes str: for
// members of compound tables.
Result<Handle> VariableStringType();

}  // namespace opverify::h5
