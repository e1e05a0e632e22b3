// Tensor files: .npy (hand-built bytes and files real numpy writes) and HDF5
// datasets (ours and h5py's), read back value for value, and the errors a
// user gets for bad files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "runner/h5/h5.h"
#include "runner/tensor_io/h5_tensor.h"
#include "runner/tensor_io/isolated_read.h"
#include "runner/tensor_io/npy.h"
#include "runner/tensor_io/tensor_file.h"
#include "tests/support/scratch_dir_test.h"

namespace opverify {
namespace {

using ::testing::HasSubstr;

constexpr DType kAllDTypes[] = {
    DType::kBool,       DType::kInt8,       DType::kInt16,   DType::kInt32,   DType::kInt64,
    DType::kUInt8,      DType::kUInt16,     DType::kUInt32,  DType::kUInt64,  DType::kFloat8E4M3FN,
    DType::kFloat8E5M2, DType::kBFloat16,   DType::kFloat16, DType::kFloat32, DType::kFloat64,
    DType::kComplex64,  DType::kComplex128, DType::kComplex32,
};

template <typename T>
T At(const TensorView& view, std::int64_t flat) {
  T value;
  std::memcpy(&value, view.ElementAt(flat), sizeof value);
  return value;
}

// The raw bytes of `values` in the machine's order.
template <typename T>
std::string Bytes(std::initializer_list<T> values) {
  std::string out;
  for (const T& value : values) out.append(reinterpret_cast<const char*>(&value), sizeof value);
  return out;
}

// `bytes` with each `unit`-byte group reversed: the other byte order.
std::string Swapped(std::string bytes, std::size_t unit) {
  for (std::size_t i = 0; i < bytes.size(); i += unit) {
    std::reverse(bytes.begin() + static_cast<std::ptrdiff_t>(i),
                 bytes.begin() + static_cast<std::ptrdiff_t>(i + unit));
  }
  return bytes;
}

// A .npy file: magic, version major.0, header length (2 bytes in 1.0, 4
// after), header and data, unpadded.
std::string NpyFile(int major, const std::string& header, const std::string& data) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  const std::string text = header + "\n";
  for (std::size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) {
    out += static_cast<char>((text.size() >> (8 * i)) & 0xff);
  }
  return out + text + data;
}

// A version 1.0, C-ordered .npy file; `shape` is a Python tuple.
std::string NpyV1(const std::string& descr, const std::string& shape, const std::string& data) {
  return NpyFile(1, "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }",
                 data);
}

// Distinct, finite element bytes for any dtype (bool: 0 or 1).
std::vector<std::byte> PatternBytes(DType dtype, std::int64_t count) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(count) * DTypeSize(dtype));
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<std::byte>(dtype == DType::kBool ? i % 2 : (i * 37 + 11) % 64);
  }
  return bytes;
}

std::vector<std::byte> ElementBytes(const TensorView& view) {
  std::vector<std::byte> bytes;
  for (std::int64_t i = 0; i < view.NumElements(); ++i) {
    bytes.insert(bytes.end(), view.ElementAt(i), view.ElementAt(i) + DTypeSize(view.dtype));
  }
  return bytes;
}

// Whether `address` lies in a memory map of the file at `path`.
bool IsMappedFrom(const void* address, const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  const auto target = reinterpret_cast<std::uintptr_t>(address);
  const std::string canonical = std::filesystem::canonical(path).string();
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, file;
    fields >> range >> perms >> offset >> device >> inode >> file;
    const std::uintptr_t begin = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    const std::uintptr_t end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    if (file == canonical && begin <= target && target < end) return true;
  }
  return false;
}

// Each test works in a fresh temporary folder.
class TensorIoTest : public testing::ScratchDirTest {
 protected:
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::string WriteFile(const std::string& name, const std::string& bytes) const {
    std::ofstream(Path(name), std::ios::binary) << bytes;
    return Path(name);
  }

  // Runs `script` with /usr/bin/python3 (numpy, h5py), the folder as argv[1].
  void RunPython(const std::string& script) const {
    WriteFile("script.py", script);
    const std::string command = std::string(OPVERIFY_PYTHON) + " " + Path("script.py") + " " + dir_;
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }

  // The error reading `bytes` as a .npy file named `name`.
  Status NpyError(const std::string& name, const std::string& bytes,
                  std::optional<DType> logical = std::nullopt) const {
    const Result<LoadedTensor> tensor = ReadNpy(WriteFile(name, bytes), logical);
    EXPECT_FALSE(tensor.ok()) << name;
    return tensor.status();
  }
};

using NpyTest = TensorIoTest;
using H5TensorTest = TensorIoTest;

// --- .npy -------------------------------------------------------------------

TEST_F(NpyTest, EveryDTypeRoundTrips) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(std::string(DTypeName(dtype)));
    const std::vector<std::byte> bytes = PatternBytes(dtype, 6);
    const std::string path = Path(std::string(DTypeName(dtype)) + ".npy");
    ASSERT_TRUE(WriteNpy(path, TensorView::Contiguous(dtype, {2, 3}, bytes.data())).ok());
    const bool raw = StorageDType(dtype) != dtype;
    const Result<LoadedTensor> tensor = ReadNpy(path, raw ? std::optional(dtype) : std::nullopt);
    ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
    EXPECT_EQ(tensor->view.dtype, dtype);
    EXPECT_EQ(tensor->view.shape, (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(ElementBytes(tensor->view), bytes);
    EXPECT_EQ(tensor->source, path);
  }
}

TEST_F(NpyTest, Bfloat16AndFloat8AreWrittenAsUnsignedIntegers) {
  const std::vector<std::byte> bytes = PatternBytes(DType::kBFloat16, 2);
  ASSERT_TRUE(
      WriteNpy(Path("bf16.npy"), TensorView::Contiguous(DType::kBFloat16, {2}, bytes.data())).ok());
  ASSERT_TRUE(
      WriteNpy(Path("fp8.npy"), TensorView::Contiguous(DType::kFloat8E5M2, {2}, bytes.data()))
          .ok());
  EXPECT_EQ(ReadNpy(Path("bf16.npy"), std::nullopt)->view.dtype, DType::kUInt16);
  EXPECT_EQ(ReadNpy(Path("fp8.npy"), std::nullopt)->view.dtype, DType::kUInt8);
}

TEST_F(NpyTest, NonContiguousViewIsWrittenInCOrder) {
  const float values[] = {0, 1, 2, 3, 4, 5};
  TensorView transposed = TensorView::Contiguous(DType::kFloat32, {3, 2}, values);
  transposed.strides = {4, 12};  // the transpose of a C-ordered 2x3
  ASSERT_TRUE(WriteNpy(Path("t.npy"), transposed).ok());
  const Result<LoadedTensor> tensor = ReadNpy(Path("t.npy"), std::nullopt);
  ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
  EXPECT_TRUE(tensor->view.IsCContiguous());
  const float expected[] = {0, 3, 1, 4, 2, 5};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(At<float>(tensor->view, i), expected[i]);
}

TEST_F(NpyTest, ReadsVersions2And3) {
  const std::string data = Bytes<std::int32_t>({7, -8, 9});
  for (int major : {2, 3}) {
    SCOPED_TRACE(major);
    const std::string header = major == 3
                                   ? "{'descr': '<i4', 'fortran_order': False, "
                                     "'shape': (3,), 'note': 'caf\xc3\xa9', }"
                                   : "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
    const std::string path = WriteFile("v.npy", NpyFile(major, header, data));
    const Result<LoadedTensor> tensor = ReadNpy(path, std::nullopt);
    ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
    EXPECT_EQ(tensor->view.shape, (std::vector<std::int64_t>{3}));
    EXPECT_EQ(At<std::int32_t>(tensor->view, 1), -8);
    EXPECT_EQ(At<std::int32_t>(tensor->view, 2), 9);
  }
}

TEST_F(NpyTest, HeaderKeysInAnyOrderAndSpacing) {
  const std::string path = WriteFile(
      "h.npy", NpyFile(1, "{ \"shape\" : ( 2 , 2 ) ,\"fortran_order\":False,'descr':'<f8'}   ",
                       Bytes<double>({1, 2, 3, 4})));
  const Result<LoadedTensor> tensor = ReadNpy(path, std::nullopt);
  ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
  EXPECT_EQ(tensor->view.shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(At<double>(tensor->view, 3), 4.0);
}

TEST_F(NpyTest, FortranOrderIsReadThroughStrides) {
  // Column-major 2x3: a00 a10 a01 a11 a02 a12.
  const std::string path =
      WriteFile("f.npy", NpyFile(1, "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }",
                                 Bytes<std::int16_t>({0, 10, 1, 11, 2, 12})));
  const Result<LoadedTensor> tensor = ReadNpy(path, std::nullopt);
  ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
  EXPECT_FALSE(tensor->view.IsCContiguous());
  const std::int16_t c_order[] = {0, 1, 2, 10, 11, 12};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(At<std::int16_t>(tensor->view, i), c_order[i]) << i;
}

TEST_F(NpyTest, BigEndianDataIsSwapped) {
  const auto read = [&](const std::string& descr, const std::string& shape,
                        const std::string& data) {
    Result<LoadedTensor> tensor =
        ReadNpy(WriteFile("be.npy", NpyV1(descr, shape, data)), std::nullopt);
    EXPECT_TRUE(tensor.ok()) << tensor.status().ToString();
    return tensor;
  };
  const Result<LoadedTensor> f4 = read(">f4", "(2,)", Swapped(Bytes<float>({1.5f, -2.25f}), 4));
  EXPECT_EQ(f4->view.dtype, DType::kFloat32);
  EXPECT_EQ(At<float>(f4->view, 0), 1.5f);
  EXPECT_EQ(At<float>(f4->view, 1), -2.25f);
  const Result<LoadedTensor> f8 = read(">f8", "(2,)", Swapped(Bytes<double>({3.125, -1e300}), 8));
  EXPECT_EQ(At<double>(f8->view, 0), 3.125);
  EXPECT_EQ(At<double>(f8->view, 1), -1e300);
  const Result<LoadedTensor> c8 = read(">c8", "(1,)", Swapped(Bytes<float>({1.5f, -2.5f}), 4));
  EXPECT_EQ(c8->view.dtype, DType::kComplex64);
  EXPECT_EQ(At<std::complex<float>>(c8->view, 0), std::complex<float>(1.5f, -2.5f));
  const Result<LoadedTensor> i4 =
      read(">i4", "(3,)", Swapped(Bytes<std::int32_t>({1, -2, 0x01020304}), 4));
  EXPECT_EQ(At<std::int32_t>(i4->view, 0), 1);
  EXPECT_EQ(At<std::int32_t>(i4->view, 1), -2);
  EXPECT_EQ(At<std::int32_t>(i4->view, 2), 0x01020304);
}

TEST_F(NpyTest, ZeroDimensionalAndEmptyArrays) {
  const Result<LoadedTensor> scalar =
      ReadNpy(WriteFile("s.npy", NpyV1("<f8", "()", Bytes<double>({42.5}))), std::nullopt);
  ASSERT_TRUE(scalar.ok()) << scalar.status().ToString();
  EXPECT_TRUE(scalar->view.shape.empty());
  EXPECT_EQ(scalar->view.NumElements(), 1);
  EXPECT_EQ(At<double>(scalar->view, 0), 42.5);

  const Result<LoadedTensor> empty =
      ReadNpy(WriteFile("e.npy", NpyV1("<f4", "(0, 3)", "")), std::nullopt);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->view.shape, (std::vector<std::int64_t>{0, 3}));
  EXPECT_EQ(empty->view.NumElements(), 0);

  ASSERT_TRUE(WriteNpy(Path("e2.npy"), empty->view).ok());
  EXPECT_EQ(ReadNpy(Path("e2.npy"), std::nullopt)->view.shape, (std::vector<std::int64_t>{0, 3}));
}

TEST_F(NpyTest, RawVoidNeedsALogicalDType) {
  const std::string v2 = NpyV1("|V2", "(2,)", Bytes<std::uint16_t>({0x3f80, 0xc000}));
  const Result<LoadedTensor> bf16 = ReadNpy(WriteFile("v2.npy", v2), DType::kBFloat16);
  ASSERT_TRUE(bf16.ok()) << bf16.status().ToString();
  EXPECT_EQ(bf16->view.dtype, DType::kBFloat16);
  EXPECT_EQ(At<std::uint16_t>(bf16->view, 1), 0xc000);

  const std::string v1 = NpyV1("|V1", "(1,)", Bytes<std::uint8_t>({0x38}));
  EXPECT_EQ(ReadNpy(WriteFile("v1.npy", v1), DType::kFloat8E4M3FN)->view.dtype,
            DType::kFloat8E4M3FN);

  const Status missing = NpyError("void.npy", v2);
  EXPECT_THAT(missing.message(), HasSubstr("void.npy"));
  EXPECT_THAT(missing.message(), HasSubstr("'|V2' data needs a logical dtype"));
}

TEST_F(NpyTest, LogicalDTypeMustFitTheStorage) {
  const std::string u2 = NpyV1("<u2", "(1,)", Bytes<std::uint16_t>({0x3c00}));
  EXPECT_EQ(ReadNpy(WriteFile("u2.npy", u2), DType::kFloat16)->view.dtype, DType::kFloat16);
  EXPECT_EQ(ReadNpy(WriteFile("u2.npy", u2), DType::kUInt16)->view.dtype, DType::kUInt16);

  const std::string i4 = NpyV1("<i4", "(1,)", Bytes<std::int32_t>({1}));
  const Status status = NpyError("ints.npy", i4, DType::kBFloat16);
  EXPECT_THAT(status.message(), HasSubstr("ints.npy"));
  EXPECT_THAT(status.message(), HasSubstr("cannot read int32 data as bfloat16"));
}

TEST_F(NpyTest, ApplyLogicalDTypeReinterpretsOnlyRawStorage) {
  const std::uint8_t byte = 0x38;
  TensorView view = TensorView::Contiguous(DType::kUInt8, {1}, &byte);
  EXPECT_TRUE(ApplyLogicalDType(&view, DType::kFloat8E5M2, "src").ok());
  EXPECT_EQ(view.dtype, DType::kFloat8E5M2);
  EXPECT_TRUE(ApplyLogicalDType(&view, DType::kFloat8E5M2, "src").ok());
  const Status status = ApplyLogicalDType(&view, DType::kFloat8E4M3FN, "src");
  EXPECT_EQ(status.message(), "src: cannot read float8_e5m2 data as float8_e4m3fn");
}

TEST_F(NpyTest, MissingFile) {
  const Result<LoadedTensor> tensor = ReadNpy(Path("absent.npy"), std::nullopt);
  ASSERT_FALSE(tensor.ok());
  EXPECT_EQ(tensor.status().code(), Status::Code::kNotFound);
  EXPECT_THAT(tensor.status().message(), HasSubstr("absent.npy: no such .npy file"));
}

TEST_F(NpyTest, NotAnNpyFile) {
  const Status status = NpyError("text.npy", "hello, world\n");
  EXPECT_THAT(status.message(), HasSubstr("text.npy: not a .npy file"));
  EXPECT_THAT(NpyError("empty.npy", "").message(), HasSubstr("empty.npy: not a .npy file"));
}

TEST_F(NpyTest, UnsupportedVersion) {
  std::string bytes = NpyV1("<f4", "()", Bytes<float>({1}));
  bytes[6] = 4;
  const Status status = NpyError("v4.npy", bytes);
  EXPECT_EQ(status.code(), Status::Code::kUnsupported);
  EXPECT_THAT(status.message(), HasSubstr("v4.npy: unsupported .npy version 4.0"));
}

TEST_F(NpyTest, BadHeaderSaysWhichKey) {
  const std::string data = Bytes<float>({1, 2});
  const struct {
    std::string header;
    std::string words;
  } cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", "cannot parse it"},
      {"{'descr': '<f4', 'fortran_order': False}", "no 'shape'"},
      {"{'fortran_order': False, 'shape': (2,)}", "no 'descr'"},
      {"{'descr': '<f4', 'shape': (2,)}", "no 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': 'no', 'shape': (2,)}",
       "'fortran_order' is not True or False"},
      {"{'descr': 4, 'fortran_order': False, 'shape': (2,)}", "'descr' is not a string"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 2}", "'shape' is not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 'x')}",
       "'shape' holds a non-integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", "negative dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
       "integer too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(100, '('),
       "nested too deeply"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", "too large"},
  };
  for (const auto& c : cases) {
    const Status status = NpyError("header.npy", NpyFile(1, c.header, data));
    EXPECT_THAT(status.message(), HasSubstr("header.npy: bad .npy header")) << c.header;
    EXPECT_THAT(status.message(), HasSubstr(c.words)) << c.header;
  }
}

TEST_F(NpyTest, HeaderLongerThanTheFile) {
  std::string bytes = NpyV1("<f4", "()", "");
  bytes[8] = '\xff';
  const Status status = NpyError("short.npy", bytes);
  EXPECT_THAT(status.message(), HasSubstr("short.npy: bad .npy header: it says"));
}

TEST_F(NpyTest, UnsupportedDTypesAreNamed) {
  for (const std::string descr : {"|O", "<M8[ns]", "<U5", "|S3", "<f16", "<q8"}) {
    const Status status = NpyError("odd.npy", NpyV1(descr, "()", "12345678"));
    EXPECT_EQ(status.code(), Status::Code::kUnsupported);
    EXPECT_THAT(status.message(), HasSubstr("odd.npy: unsupported dtype '" + descr + "'"));
  }
  const Status structured = NpyError(
      "rec.npy",
      NpyFile(
          1,
          "{'descr': [('a', '<f4'), ('b', '<i4', (2,))], 'fortran_order': False, 'shape': (1,), }",
          std::string(12, '\0')));
  EXPECT_THAT(structured.message(), HasSubstr("rec.npy: structured dtypes"));
}

TEST_F(NpyTest, TruncatedData) {
  const Status status = NpyError("cut.npy", NpyV1("<f4", "(4,)", Bytes<float>({1, 2})));
  EXPECT_THAT(status.message(), HasSubstr("cut.npy: truncated: expected 16 bytes of data"));
  EXPECT_THAT(status.message(), HasSubstr("the file has 8"));
}

TEST_F(NpyTest, TrailingBytes) {
  const Status status = NpyError("long.npy", NpyV1("<f4", "(2,)", Bytes<float>({1, 2, 3})));
  EXPECT_THAT(status.message(), HasSubstr("long.npy: size mismatch: expected 8 bytes of data"));
  EXPECT_THAT(status.message(), HasSubstr("the file has 12 (extra bytes at the end)"));
}

TEST_F(NpyTest, ReadsWhatNumpyWrites) {
  RunPython(R"(
import sys
import numpy as np
d = sys.argv[1]
a = np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5
np.save(d + '/c.npy', a)
for version in ((2, 0), (3, 0)):
    with open(d + '/v%d.npy' % version[0], 'wb') as f:
        np.lib.format.write_array(f, a, version=version)
np.save(d + '/fortran.npy', np.asfortranarray(a))
np.save(d + '/big.npy', a.astype('>f4'))
np.save(d + '/scalar.npy', np.float64(2.5))
np.save(d + '/empty.npy', np.zeros((0, 3), np.int16))
np.save(d + '/bool.npy', np.array([True, False, True]))
np.save(d + '/c16.npy', np.array([1 + 2j, -3.5j]))
np.save(d + '/big_c8.npy', np.array([1 + 2j], '>c8'))
np.save(d + '/f16.npy', np.array([1.0, -0.5, 65504], np.float16))
)");
  for (const std::string name : {"c", "v2", "v3", "fortran", "big"}) {
    SCOPED_TRACE(name);
    const Result<LoadedTensor> tensor = ReadNpy(Path(name + ".npy"), std::nullopt);
    ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
    EXPECT_EQ(tensor->view.dtype, DType::kFloat32);
    EXPECT_EQ(tensor->view.shape, (std::vector<std::int64_t>{3, 4}));
    for (int i = 0; i < 12; ++i) EXPECT_EQ(At<float>(tensor->view, i), 0.5f * i) << i;
  }
  // Native data is not copied: the view points into a map of the file.
  const Result<LoadedTensor> native = ReadNpy(Path("c.npy"), std::nullopt);
  EXPECT_TRUE(IsMappedFrom(native->view.data, Path("c.npy")));
  EXPECT_FALSE(IsMappedFrom(ReadNpy(Path("big.npy"), std::nullopt)->view.data, Path("big.npy")));

  const Result<LoadedTensor> scalar = ReadNpy(Path("scalar.npy"), std::nullopt);
  EXPECT_TRUE(scalar->view.shape.empty());
  EXPECT_EQ(At<double>(scalar->view, 0), 2.5);
  EXPECT_EQ(ReadNpy(Path("empty.npy"), std::nullopt)->view.shape,
            (std::vector<std::int64_t>{0, 3}));
  const Result<LoadedTensor> flags = ReadNpy(Path("bool.npy"), std::nullopt);
  EXPECT_EQ(flags->view.dtype, DType::kBool);
  EXPECT_EQ(At<std::uint8_t>(flags->view, 2), 1);
  EXPECT_EQ(At<std::complex<double>>(ReadNpy(Path("c16.npy"), std::nullopt)->view, 1),
            std::complex<double>(0, -3.5));
  EXPECT_EQ(At<std::complex<float>>(ReadNpy(Path("big_c8.npy"), std::nullopt)->view, 0),
            std::complex<float>(1, 2));
  const Result<LoadedTensor> half = ReadNpy(Path("f16.npy"), std::nullopt);
  EXPECT_EQ(half->view.dtype, DType::kFloat16);
  EXPECT_EQ(At<std::uint16_t>(half->view, 2), 0x7bff);  // 65504
}

TEST_F(NpyTest, NumpyReadsWhatWeWrite) {
  const float values[] = {1.5f, -2, 3, 4, 5, 6};
  ASSERT_TRUE(
      WriteNpy(Path("f4.npy"), TensorView::Contiguous(DType::kFloat32, {2, 3}, values)).ok());
  const std::uint16_t bf16[] = {0x3f80, 0xc000};
  ASSERT_TRUE(WriteNpy(Path("bf16.npy"), TensorView::Contiguous(DType::kBFloat16, {2}, bf16)).ok());
  const double scalar = 7.25;
  ASSERT_TRUE(
      WriteNpy(Path("scalar.npy"), TensorView::Contiguous(DType::kFloat64, {}, &scalar)).ok());
  RunPython(R"(
import sys
import numpy as np
d = sys.argv[1]
a = np.load(d + '/f4.npy')
assert a.dtype == np.float32 and a.shape == (2, 3), a
assert (a.ravel() == [1.5, -2, 3, 4, 5, 6]).all(), a
b = np.load(d + '/bf16.npy')
assert b.dtype == np.uint16 and list(b) == [0x3f80, 0xc000], b
s = np.load(d + '/scalar.npy')
assert s.shape == () and s == 7.25, s
)");
}

// --- ReadTensorFile -------------------------------------------------------------

TEST_F(TensorIoTest, SpecPicksTheFormat) {
  const std::int32_t values[] = {1, 2};
  const TensorView view = TensorView::Contiguous(DType::kInt32, {2}, values);
  ASSERT_TRUE(WriteNpy(Path("a.npy"), view).ok());
  {
    Result<h5::Handle> file = h5::OpenFile(Path("a.h5"), h5::FileMode::kTruncate);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ASSERT_TRUE(WriteH5Dataset(file.value(), "/g/x", view).ok());
  }
  const Result<LoadedTensor> npy = ReadTensorFile(Path("a.npy"));
  ASSERT_TRUE(npy.ok()) << npy.status().ToString();
  EXPECT_EQ(At<std::int32_t>(npy->view, 1), 2);
  const Result<LoadedTensor> h5 = ReadTensorFile(Path("a.h5") + ":/g/x");
  ASSERT_TRUE(h5.ok()) << h5.status().ToString();
  EXPECT_EQ(At<std::int32_t>(h5->view, 1), 2);
  EXPECT_EQ(h5->source, Path("a.h5") + ":/g/x");

  for (const std::string name : {"a.h5", "a.hdf5"}) {
    const Result<LoadedTensor> bare = ReadTensorFile(Path(name));
    ASSERT_FALSE(bare.ok());
    EXPECT_THAT(bare.status().message(),
                HasSubstr(name + ": name the dataset as FILE.h5:/path/to/dataset"));
  }
}

// --- ReadInChild ----------------------------------------------------------------

constexpr std::chrono::milliseconds kLimit{30'000};

TEST(ReadInChildTest, TheChildsTensorComesBackContiguousWithItsDType) {
  // A transposed 2x3 bfloat16 view: the answer is its C-ordered copy.
  const std::uint16_t values[] = {1, 2, 3, 4, 5, 6};
  const Result<LoadedTensor> read = ReadInChild("t.h5:/t", [&]() -> Result<LoadedTensor> {
    LoadedTensor tensor;
    tensor.view = TensorView::Contiguous(DType::kBFloat16, {3, 2}, values);
    tensor.view.shape = {2, 3};
    tensor.view.strides = {2, 4};
    return tensor;
  }, kLimit);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->view.dtype, DType::kBFloat16);
  EXPECT_EQ(read->view.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_TRUE(read->view.IsCContiguous());
  EXPECT_EQ(read->source, "t.h5:/t");
  const std::vector<std::uint16_t> expected = {1, 3, 5, 2, 4, 6};
  for (std::int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(*reinterpret_cast<const std::uint16_t*>(read->view.ElementAt(i)), expected[i]) << i;
  }
}

TEST(ReadInChildTest, ATensorLargerThanOneMessageComesBackWhole) {
  // Over 64 MiB: the bytes come in more than one chunk.
  std::vector<std::uint8_t> values((std::size_t{65} << 20) + 3);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint8_t>(i * 7 + i / 4099);
  const Result<LoadedTensor> read = ReadInChild("big.h5:/t", [&]() -> Result<LoadedTensor> {
    LoadedTensor tensor;
    tensor.view = TensorView::Contiguous(DType::kUInt8, {static_cast<std::int64_t>(values.size())},
                                         values.data());
    return tensor;
  }, kLimit);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->view.NumElements(), static_cast<std::int64_t>(values.size()));
  EXPECT_EQ(std::memcmp(read->view.data, values.data(), values.size()), 0);
}

TEST(ReadInChildTest, TheChildsErrorKeepsItsCodeAndMessage) {
  const Result<LoadedTensor> read = ReadInChild(
      "t.h5:/t", []() -> Result<LoadedTensor> { return Status::NotFound("t.h5: no dataset /t"); },
      kLimit);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(read.status().message(), "t.h5: no dataset /t");
}

TEST(ReadInChildTest, AReaderThatCrashesIsAnErrorNamingTheFileAndTheSignal) {
  int caller_alive = 0;
  const Result<LoadedTensor> read = ReadInChild("bad.h5:/t", [&]() -> Result<LoadedTensor> {
    ++caller_alive;  // the child's copy: the parent's stays 0
    std::raise(SIGSEGV);
    return Status::Internal("unreachable");
  }, kLimit);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), Status::Code::kIoError);
  EXPECT_THAT(read.status().message(), HasSubstr("bad.h5:/t: reading it crashed the reader"));
  EXPECT_THAT(read.status().message(), HasSubstr("SIGSEGV"));
  EXPECT_EQ(caller_alive, 0);
}

TEST(ReadInChildTest, AReaderThatExitsBeforeAnsweringIsAnError) {
  const Result<LoadedTensor> read = ReadInChild("bad.h5:/t", []() -> Result<LoadedTensor> {
    std::_Exit(86);
  }, kLimit);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr("exit code 86"));
}

TEST(ReadInChildTest, AReaderThatHangsIsKilledAfterTheIdleLimit) {
  const Result<LoadedTensor> read = ReadInChild("loop.h5:/t", []() -> Result<LoadedTensor> {
    for (;;) pause();
  }, std::chrono::milliseconds(200));
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr("loop.h5:/t: its reader made no progress for 0.200 s"));
}

TEST(ReadInChildTest, ATensorFileThatCrashesLibhdf5IsAnError) {
  // Found by fuzz_h5: a damaged local heap makes H5HL_protect copy from NULL
  // (h5dump dies on it too).
  const std::string file =
      std::string(OPVERIFY_SOURCE_DIR) + "/tests/fixtures/corrupt_h5/local-heap-crash.h5";
  const Result<LoadedTensor> read = ReadTensorFile(file + ":/t");
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(),
              HasSubstr("local-heap-crash.h5:/t: reading it crashed the reader (signal SIGSEGV"));
}

TEST(ReadInChildTest, ATensorFileThatHangsLibhdf5IsAnError) {
  // Found by fuzz_h5: a damaged global heap makes H5HG_read loop.
  const std::string file =
      std::string(OPVERIFY_SOURCE_DIR) + "/tests/fixtures/corrupt_h5/global-heap-loop.h5";
  const Result<LoadedTensor> read = ReadTensorFile(file + ":/g/t", std::nullopt, std::chrono::seconds(2));
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr("global-heap-loop.h5:/g/t: its reader made no progress"));
}

// --- HDF5 -------------------------------------------------------------------

TEST_F(H5TensorTest, EveryDTypeRoundTrips) {
  {
    Result<h5::Handle> file = h5::OpenFile(Path("all.h5"), h5::FileMode::kTruncate);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    for (DType dtype : kAllDTypes) {
      const std::vector<std::byte> bytes = PatternBytes(dtype, 6);
      const Status status =
          WriteH5Dataset(file.value(), "/tensors/" + std::string(DTypeName(dtype)),
                         TensorView::Contiguous(dtype, {3, 2}, bytes.data()));
      ASSERT_TRUE(status.ok()) << status.ToString();
    }
  }
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(std::string(DTypeName(dtype)));
    const Result<LoadedTensor> tensor =
        ReadH5Dataset(Path("all.h5"), "/tensors/" + std::string(DTypeName(dtype)), std::nullopt);
    ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
    EXPECT_EQ(tensor->view.dtype, dtype);
    EXPECT_EQ(tensor->view.shape, (std::vector<std::int64_t>{3, 2}));
    EXPECT_EQ(ElementBytes(tensor->view), PatternBytes(dtype, 6));
  }
}

TEST_F(H5TensorTest, WritesScalarsEmptiesAndStridedViewsAndReplaces) {
  const double scalar = 2.5;
  const float values[] = {0, 1, 2, 3, 4, 5};
  TensorView transposed = TensorView::Contiguous(DType::kFloat32, {3, 2}, values);
  transposed.strides = {4, 12};
  {
    Result<h5::Handle> file = h5::OpenFile(Path("t.h5"), h5::FileMode::kTruncate);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE(
        WriteH5Dataset(file.value(), "s", TensorView::Contiguous(DType::kFloat64, {}, &scalar))
            .ok());
    ASSERT_TRUE(
        WriteH5Dataset(file.value(), "e", TensorView::Contiguous(DType::kInt8, {2, 0}, values))
            .ok());
    ASSERT_TRUE(
        WriteH5Dataset(file.value(), "t", TensorView::Contiguous(DType::kFloat32, {1}, values))
            .ok());
    ASSERT_TRUE(WriteH5Dataset(file.value(), "t", transposed).ok());
  }
  const Result<LoadedTensor> s = ReadH5Dataset(Path("t.h5"), "/s", std::nullopt);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->view.shape.empty());
  EXPECT_EQ(At<double>(s->view, 0), 2.5);
  const Result<LoadedTensor> e = ReadH5Dataset(Path("t.h5"), "/e", std::nullopt);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->view.shape, (std::vector<std::int64_t>{2, 0}));
  const Result<LoadedTensor> t = ReadH5Dataset(Path("t.h5"), "/t", std::nullopt);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->view.shape, (std::vector<std::int64_t>{3, 2}));
  const float expected[] = {0, 3, 1, 4, 2, 5};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(At<float>(t->view, i), expected[i]);
}

TEST_F(H5TensorTest, ReadsWhatH5pyWrites) {
  RunPython(R"(
import sys
import h5py
import numpy as np
with h5py.File(sys.argv[1] + '/py.h5', 'w') as f:
    f['bool'] = np.array([True, False, True])
    f['complex64'] = np.array([1 + 2j, -3.5j], np.complex64)
    f['complex128'] = np.array([0.25 - 1j], np.complex128)
    f['float16'] = np.array([1.0, -0.5, 65504], np.float16)
    f['float16_be'] = np.array([1.0, -0.5], '>f2')
    f['f8_be'] = np.array([1.5, -2.25e300], '>f8')
    f['i4_be'] = np.array([1, -2], '>i4')
    f.create_dataset('g/bf16', data=np.array([0x3f80, 0xc000], np.uint16)).attrs['dtype'] = 'bfloat16'
    f.create_dataset('g/fp8', data=np.array([0x38], np.uint8)).attrs['dtype'] = np.bytes_('float8_e4m3fn')
    f['scalar'] = np.float64(2.5)
    f['empty'] = np.zeros((0, 3), np.float32)
    f['text'] = 'hello'
    f['pair'] = np.array([(1, 2.0)], dtype=[('a', '<i4'), ('b', '<f8')])
)");
  const std::string file = Path("py.h5");
  const auto read = [&](const std::string& dataset) {
    Result<LoadedTensor> tensor = ReadH5Dataset(file, dataset, std::nullopt);
    EXPECT_TRUE(tensor.ok()) << tensor.status().ToString();
    return tensor;
  };
  const Result<LoadedTensor> flags = read("/bool");
  EXPECT_EQ(flags->view.dtype, DType::kBool);
  EXPECT_EQ(ElementBytes(flags->view),
            (std::vector<std::byte>{std::byte{1}, std::byte{0}, std::byte{1}}));
  const Result<LoadedTensor> c8 = read("/complex64");
  EXPECT_EQ(c8->view.dtype, DType::kComplex64);
  EXPECT_EQ(At<std::complex<float>>(c8->view, 1), std::complex<float>(0, -3.5f));
  const Result<LoadedTensor> c16 = read("/complex128");
  EXPECT_EQ(c16->view.dtype, DType::kComplex128);
  EXPECT_EQ(At<std::complex<double>>(c16->view, 0), std::complex<double>(0.25, -1));
  for (const std::string name : {"/float16", "/float16_be"}) {
    const Result<LoadedTensor> half = read(name);
    EXPECT_EQ(half->view.dtype, DType::kFloat16) << name;
    EXPECT_EQ(At<std::uint16_t>(half->view, 0), 0x3c00) << name;  // 1.0
    EXPECT_EQ(At<std::uint16_t>(half->view, 1), 0xb800) << name;  // -0.5
  }
  EXPECT_EQ(At<double>(read("/f8_be")->view, 1), -2.25e300);
  EXPECT_EQ(At<std::int32_t>(read("/i4_be")->view, 1), -2);
  const Result<LoadedTensor> bf16 = read("/g/bf16");
  EXPECT_EQ(bf16->view.dtype, DType::kBFloat16);
  EXPECT_EQ(At<std::uint16_t>(bf16->view, 1), 0xc000);
  EXPECT_EQ(read("g/fp8")->view.dtype, DType::kFloat8E4M3FN);
  const Result<LoadedTensor> scalar = read("/scalar");
  EXPECT_TRUE(scalar->view.shape.empty());
  EXPECT_EQ(At<double>(scalar->view, 0), 2.5);
  EXPECT_EQ(read("/empty")->view.shape, (std::vector<std::int64_t>{0, 3}));

  const Result<LoadedTensor> text = ReadH5Dataset(file, "/text", std::nullopt);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), Status::Code::kUnsupported);
  EXPECT_THAT(text.status().message(), HasSubstr(file + ":/text: unsupported HDF5 type: string"));
  const Result<LoadedTensor> pair = ReadH5Dataset(file, "/pair", std::nullopt);
  ASSERT_FALSE(pair.ok());
  EXPECT_THAT(pair.status().message(), HasSubstr("other than h5py's complex"));
}

TEST_F(H5TensorTest, H5pyReadsWhatWeWrite) {
  const std::uint8_t flags[] = {1, 0};
  const float complex[] = {1, 2};
  const std::uint16_t half[] = {0x3c00};
  const std::uint16_t bf16[] = {0x3f80};
  {
    Result<h5::Handle> file = h5::OpenFile(Path("ours.h5"), h5::FileMode::kTruncate);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE(
        WriteH5Dataset(file.value(), "b", TensorView::Contiguous(DType::kBool, {2}, flags)).ok());
    ASSERT_TRUE(
        WriteH5Dataset(file.value(), "c", TensorView::Contiguous(DType::kComplex64, {1}, complex))
            .ok());
    ASSERT_TRUE(
        WriteH5Dataset(file.value(), "h", TensorView::Contiguous(DType::kFloat16, {1}, half)).ok());
    ASSERT_TRUE(
        WriteH5Dataset(file.value(), "x/y/bf", TensorView::Contiguous(DType::kBFloat16, {1}, bf16))
            .ok());
  }
  RunPython(R"(
import sys
import h5py
import numpy as np
with h5py.File(sys.argv[1] + '/ours.h5', 'r') as f:
    assert f['b'].dtype == np.bool_ and list(f['b'][()]) == [True, False]
    assert f['c'].dtype == np.complex64 and f['c'][0] == 1 + 2j
    assert f['h'].dtype == np.float16 and f['h'][0] == 1.0
    bf = f['x/y/bf']
    assert bf.dtype == np.uint16 and bf[0] == 0x3f80 and bf.attrs['dtype'] == 'bfloat16'
)");
}

TEST_F(H5TensorTest, LogicalDTypeAndTheDTypeAttributeMustAgree) {
  const std::uint16_t bits[] = {0x3f80};
  {
    Result<h5::Handle> file = h5::OpenFile(Path("l.h5"), h5::FileMode::kTruncate);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE(
        WriteH5Dataset(file.value(), "bf", TensorView::Contiguous(DType::kBFloat16, {1}, bits))
            .ok());
    ASSERT_TRUE(
        WriteH5Dataset(file.value(), "u", TensorView::Contiguous(DType::kUInt16, {1}, bits)).ok());
  }
  EXPECT_EQ(ReadH5Dataset(Path("l.h5"), "/bf", DType::kBFloat16)->view.dtype, DType::kBFloat16);
  EXPECT_EQ(ReadH5Dataset(Path("l.h5"), "/u", DType::kFloat16)->view.dtype, DType::kFloat16);
  const Result<LoadedTensor> clash = ReadH5Dataset(Path("l.h5"), "/bf", DType::kFloat16);
  ASSERT_FALSE(clash.ok());
  EXPECT_THAT(
      clash.status().message(),
      HasSubstr("l.h5:/bf: asked to read it as float16, but its dtype attribute says bfloat16"));
  const Result<LoadedTensor> wrong = ReadH5Dataset(Path("l.h5"), "/u", DType::kFloat32);
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(), HasSubstr("l.h5:/u: cannot read uint16 data as float32"));
}

TEST_F(H5TensorTest, MissingFileNotHdf5AndMissingDataset) {
  const Result<LoadedTensor> missing = ReadH5Dataset(Path("absent.h5"), "/x", std::nullopt);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("absent.h5: no such HDF5 file"));

  const Result<LoadedTensor> text =
      ReadH5Dataset(WriteFile("text.h5", "not hdf5 at all\n"), "/x", std::nullopt);
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("text.h5: not an HDF5 file"));

  {
    Result<h5::Handle> file = h5::OpenFile(Path("d.h5"), h5::FileMode::kTruncate);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE(h5::CreateGroup(file->id(), "/g").ok());
  }
  for (const std::string dataset : {"/nope", "/g/nope", "/a/b/c"}) {
    const Result<LoadedTensor> absent = ReadH5Dataset(Path("d.h5"), dataset, std::nullopt);
    ASSERT_FALSE(absent.ok());
    EXPECT_EQ(absent.status().code(), Status::Code::kNotFound);
    EXPECT_THAT(absent.status().message(), HasSubstr("d.h5:" + dataset + ": no such dataset"));
  }
}

TEST_F(H5TensorTest, ADatasetTheFileDoesNotHoldIsRefusedBeforeItIsAllocated) {
  std::vector<std::int32_t> part(10000, 3);
  {
    Result<h5::Handle> file = h5::OpenFile(Path("held.h5"), h5::FileMode::kTruncate);
    ASSERT_TRUE(file.ok());
    h5::DatasetOptions options;
    options.chunk = {10000};
    options.deflate_level = 9;
    // Written in part: 1 of its 10 chunks.
    Result<h5::Handle> sparse =
        h5::CreateDataset(file->id(), "sparse", H5T_NATIVE_INT32, {100000}, options);
    ASSERT_TRUE(sparse.ok());
    ASSERT_TRUE(
        h5::WriteDatasetBlock(sparse->id(), H5T_NATIVE_INT32, {0}, {10000}, part.data()).ok());
    // Never written.
    ASSERT_TRUE(h5::CreateDataset(file->id(), "unwritten", H5T_NATIVE_INT32, {1000}).ok());
    // Zeros at zlib's best ratio: whole, so read.
    options.chunk = {1 << 20};
    options.shuffle = true;
    const std::vector<std::int32_t> zeros(1 << 20, 0);
    Result<h5::Handle> packed =
        h5::CreateDataset(file->id(), "zeros", H5T_NATIVE_INT32, {1 << 20}, options);
    ASSERT_TRUE(packed.ok());
    ASSERT_TRUE(h5::WriteDataset(packed->id(), H5T_NATIVE_INT32, zeros.data()).ok());
    // Kept in another file (h5py's external=): more bytes than this file has.
    const hid_t external = H5Pcreate(H5P_DATASET_CREATE);
    ASSERT_GE(H5Pset_external(external, Path("held.bin").c_str(), 0, H5F_UNLIMITED), 0);
    const hsize_t extent = 1 << 20;
    const hid_t space = H5Screate_simple(1, &extent, nullptr);
    const hid_t outside = H5Dcreate2(file->id(), "outside", H5T_NATIVE_INT32, space, H5P_DEFAULT,
                                     external, H5P_DEFAULT);
    ASSERT_GE(outside, 0);
    ASSERT_GE(H5Dwrite(outside, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros.data()), 0);
    H5Dclose(outside);
    H5Sclose(space);
    H5Pclose(external);
  }
  const Result<LoadedTensor> sparse = ReadH5Dataset(Path("held.h5"), "/sparse", std::nullopt);
  ASSERT_FALSE(sparse.ok());
  EXPECT_EQ(sparse.status().code(), Status::Code::kInvalidInput);
  EXPECT_THAT(sparse.status().message(),
              HasSubstr("held.h5:/sparse: its shape (100000) needs 400000 bytes in 10 chunks, and "
                        "only 1 are stored"));
  const Result<LoadedTensor> unwritten = ReadH5Dataset(Path("held.h5"), "/unwritten", std::nullopt);
  ASSERT_FALSE(unwritten.ok());
  EXPECT_THAT(
      unwritten.status().message(),
      HasSubstr("held.h5:/unwritten: its shape (1000) needs 4000 bytes and none are stored"));
  const Result<LoadedTensor> zeros = ReadH5Dataset(Path("held.h5"), "/zeros", std::nullopt);
  ASSERT_TRUE(zeros.ok()) << zeros.status().ToString();
  EXPECT_EQ(zeros->view.NumElements(), 1 << 20);
  const Result<LoadedTensor> outside = ReadH5Dataset(Path("held.h5"), "/outside", std::nullopt);
  ASSERT_TRUE(outside.ok()) << outside.status().ToString();
  EXPECT_EQ(outside->view.NumElements(), 1 << 20);

  // Found by fuzz_h5: 4,244,635,712 float16 past a maximum extent of 64, one
  // 16-element chunk stored; it made the reader allocate 8.5 GB.
  const std::string crafted =
      std::string(OPVERIFY_SOURCE_DIR) + "/tests/fixtures/corrupt_h5/extent-past-maximum.h5";
  const Result<LoadedTensor> past = ReadH5Dataset(crafted, "/t", std::nullopt);
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(past.status().message(),
              HasSubstr("extent-past-maximum.h5:/t: its extent (4244635712) passes its maximum "
                        "(64): the file is corrupt"));
}

// --- The HDF5 wrapper -----------------------------------------------------------

TEST_F(H5TensorTest, FailuresCarryHdf5sReasonAndPrintNothing) {
  Result<h5::Handle> file = h5::OpenFile(Path("w.h5"), h5::FileMode::kTruncate);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(h5::CreateGroup(file->id(), "/a/b").ok());  // intermediate groups made
  ::testing::internal::CaptureStderr();
  const Result<h5::Handle> dataset = h5::OpenDataset(file->id(), "/a/b");
  const Result<h5::Handle> again = h5::CreateGroup(file->id(), "/a/b");
  const std::string printed = ::testing::internal::GetCapturedStderr();
  ASSERT_FALSE(dataset.ok());
  EXPECT_THAT(dataset.status().message(), HasSubstr("w.h5:/a/b: H5Dopen2 failed: not a dataset"));
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.status().message(),
              HasSubstr("w.h5:/a/b: H5Gcreate2 failed: name already exists"));
  EXPECT_EQ(printed, "");
  EXPECT_EQ(h5::OpenGroup(file->id(), "/a/x").status().code(), Status::Code::kNotFound);
}

TEST_F(H5TensorTest, ChunkedCompressedDatasetsAndStringAttributes) {
  std::vector<std::int32_t> values(100000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i % 7);
  {
    Result<h5::Handle> file = h5::OpenFile(Path("z.h5"), h5::FileMode::kTruncate);
    ASSERT_TRUE(file.ok());
    Result<h5::Handle> group = h5::CreateGroup(file->id(), "runs/r0");
    ASSERT_TRUE(group.ok());
    h5::DatasetOptions options;
    options.chunk = {10000};
    options.shuffle = true;
    options.deflate_level = 4;
    Result<h5::Handle> dataset =
        h5::CreateDataset(group->id(), "values", H5T_NATIVE_INT32, {100000}, options);
    ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
    ASSERT_TRUE(h5::WriteDataset(dataset->id(), H5T_NATIVE_INT32, values.data()).ok());
    ASSERT_TRUE(h5::WriteStringAttribute(group->id(), "note", "first").ok());
    ASSERT_TRUE(h5::WriteStringAttribute(group->id(), "note", "second, caf\xc3\xa9").ok());
  }
  Result<h5::Handle> file = h5::OpenFile(Path("z.h5"), h5::FileMode::kReadOnly);
  ASSERT_TRUE(file.ok());
  Result<h5::Handle> group = h5::OpenGroup(file->id(), "/runs/r0");
  ASSERT_TRUE(group.ok());
  EXPECT_EQ(h5::ReadStringAttribute(group->id(), "note").value(), "second, caf\xc3\xa9");
  EXPECT_EQ(h5::ReadStringAttribute(group->id(), "absent").value(), std::nullopt);
  Result<h5::Handle> dataset = h5::OpenDataset(group->id(), "values");
  ASSERT_TRUE(dataset.ok());
  EXPECT_EQ(h5::DatasetDims(dataset->id()).value(), (std::vector<hsize_t>{100000}));
  std::vector<std::int32_t> read(values.size());
  ASSERT_TRUE(h5::ReadDataset(dataset->id(), H5T_NATIVE_INT32, read.data()).ok());
  EXPECT_EQ(read, values);
  EXPECT_LT(std::filesystem::file_size(Path("z.h5")), 100000u);  // a quarter of the raw bytes
}

}  // namespace
}  // namespace opverify
