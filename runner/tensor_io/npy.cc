#include "runner/tensor_io/npy.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/common/user_file.h"

namespace opverify {
namespace {

constexpr std::string_view kMagic("\x93NUMPY", 6);
// numpy pads the header so the data starts on a 64-byte boundary.
constexpr std::size_t kAlignment = 64;
constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

// numpy's type codes ("<f4": kind 'f', 4 bytes) and the dtypes they hold.
struct NpyType {
  char kind;
  std::uint8_t size;
  DType dtype;
};
constexpr NpyType kNpyTypes[] = {
    {'b', 1, DType::kBool},
    {'i', 1, DType::kInt8},
    {'i', 2, DType::kInt16},
    {'i', 4, DType::kInt32},
    {'i', 8, DType::kInt64},
    {'u', 1, DType::kUInt8},
    {'u', 2, DType::kUInt16},
    {'u', 4, DType::kUInt32},
    {'u', 8, DType::kUInt64},
    {'f', 2, DType::kFloat16},
    {'f', 4, DType::kFloat32},
    {'f', 8, DType::kFloat64},
    {'c', 8, DType::kComplex64},
    {'c', 16, DType::kComplex128},
    // Raw bytes: read only, as the storage of a logical dtype. After the 'u'
    // entries, so writers find those first.
    {'V', 1, DType::kUInt8},
    {'V', 2, DType::kUInt16},
};

Status BadHeader(const std::string& path, const std::string& what) {
  return Status::InvalidInput(path + ": bad .npy header: " + what);
}

// --- Reading the file ------------------------------------------------------

// A read-only memory map of a whole file.
struct MappedFile {
  std::shared_ptr<const void> owner;  // unmaps when the last user is gone
  const char* data = nullptr;
  std::size_t size = 0;
};

struct DescriptorCloser {
  int fd;
  ~DescriptorCloser() { ::close(fd); }
};

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

Result<MappedFile> MapFile(const std::string& path) {
  // Checked before open(2), which waits forever on a FIFO; O_NONBLOCK for
  // one put in its place since.
  if (Status regular = CheckRegularFile(path, ".npy file"); !regular.ok()) return regular;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::IoError(path + ": cannot open: " + std::strerror(errno));
  }
  const DescriptorCloser closer{fd};  // the map outlives the descriptor
  struct stat info {};
  if (::fstat(fd, &info) != 0)
    return Status::IoError(path + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) return Status::InvalidInput(path + ": not a regular file");
  MappedFile file;
  file.size = static_cast<std::size_t>(info.st_size);
  if (file.size == 0) return file;
  void* map = ::mmap(nullptr, file.size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) return Status::IoError(path + ": cannot map: " + std::strerror(errno));
  const std::size_t size = file.size;
  file.owner.reset(map, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
  file.data = static_cast<const char*>(map);
  return file;
}

// The header text and where the data starts, from the fixed preamble:
// magic, version, little-endian header length (2 bytes in 1.0, 4 after).
struct Preamble {
  std::string_view header;
  std::size_t data_offset = 0;
};

Result<Preamble> ReadPreamble(const MappedFile& file, const std::string& path) {
  if (file.size < kMagic.size() + 2 || std::string_view(file.data, kMagic.size()) != kMagic) {
    return Status::InvalidInput(path + ": not a .npy file (no \\x93NUMPY magic)");
  }
  const int major = static_cast<unsigned char>(file.data[6]);
  const int minor = static_cast<unsigned char>(file.data[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return Status::Unsupported(path + ": unsupported .npy version " + std::to_string(major) + "." +
                               std::to_string(minor) + " (1.0, 2.0 and 3.0 are read)");
  }
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::size_t header_offset = kMagic.size() + 2 + length_bytes;
  if (file.size < header_offset) return BadHeader(path, "the file ends inside the preamble");
  std::size_t header_length = 0;
  for (std::size_t i = length_bytes; i-- > 0;) {
    header_length = header_length << 8 | static_cast<unsigned char>(file.data[8 + i]);
  }
  if (header_length > file.size - header_offset) {
    return BadHeader(path, "it says " + std::to_string(header_length) + " bytes, the file has " +
                               std::to_string(file.size - header_offset) + " after the preamble");
  }
  return Preamble{std::string_view(file.data + header_offset, header_length),
                  header_offset + header_length};
}

// --- Parsing the header ------------------------------------------------------

// A Python literal as .npy headers hold them.
struct Literal {
  enum class Kind { kString, kBool, kInt, kTuple, kList };
  Kind kind = Kind::kString;
  std::string text;            // kString
  bool flag = false;           // kBool
  std::int64_t number = 0;     // kInt
  std::vector<Literal> items;  // kTuple, kList
};

// Parses the header's dict, {'key': literal, ...}, as Python would: any key
// order, any spacing, trailing commas.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  bool ParseDict(std::map<std::string, Literal>* dict) {
    if (!Consume('{')) return Fail("expected '{'");
    while (!Consume('}')) {
      std::string key;
      SkipSpace();
      if (!ParseString(&key)) return false;
      if (!Consume(':')) return Fail("expected ':' after '" + key + "'");
      Literal value;
      if (!ParseLiteral(&value)) return false;
      (*dict)[key] = std::move(value);
      if (!Consume(',')) {
        if (!Consume('}')) return Fail("expected ',' or '}'");
        break;
      }
    }
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected text after the dict");
    return true;
  }

  const std::string& error() const { return error_; }

 private:
  bool ParseLiteral(Literal* out) {
    SkipSpace();
    if (pos_ == text_.size()) return Fail("unexpected end");
    const char c = text_[pos_];
    if (c == '\'' || c == '"') {
      out->kind = Literal::Kind::kString;
      return ParseString(&out->text);
    }
    if (c == '(' || c == '[') {
      if (depth_ == kMaxDepth) return Fail("nested too deeply");
      ++pos_;
      ++depth_;
      out->kind = c == '(' ? Literal::Kind::kTuple : Literal::Kind::kList;
      const bool parsed = ParseSequence(c == '(' ? ')' : ']', &out->items);
      --depth_;
      return parsed;
    }
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      out->kind = Literal::Kind::kInt;
      return ParseInt(&out->number);
    }
    for (const auto& [word, flag] : {std::pair{std::string_view("True"), true}, {"False", false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        out->kind = Literal::Kind::kBool;
        out->flag = flag;
        return true;
      }
    }
    return Fail("unexpected character '" + std::string(1, c) + "'");
  }

  bool ParseString(std::string* out) {
    if (pos_ == text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      return Fail("expected a quoted string");
    }
    const char quote = text_[pos_++];
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == quote) return true;
      if (c == '\\' && pos_ < text_.size()) c = text_[pos_++];
      out->push_back(c);
    }
    return Fail("unterminated string");
  }

  bool ParseInt(std::int64_t* out) {
    const bool negative = text_[pos_] == '-';
    if (negative) ++pos_;
    if (pos_ == text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      return Fail("expected an integer");
    }
    std::int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      const int digit = text_[pos_++] - '0';
      if (value > (std::numeric_limits<std::int64_t>::max() - digit) / 10) {
        return Fail("integer too large");
      }
      value = value * 10 + digit;
    }
    // Python 2's long suffix, in files numpy wrote under Python 2.
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;
    *out = negative ? -value : value;
    return true;
  }

  bool ParseSequence(char close, std::vector<Literal>* items) {
    while (!Consume(close)) {
      Literal item;
      if (!ParseLiteral(&item)) return false;
      items->push_back(std::move(item));
      if (!Consume(',')) {
        if (!Consume(close)) return Fail(std::string("expected ',' or '") + close + "'");
        break;
      }
    }
    return true;
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  // Skips spaces, then takes `c` if it is next.
  bool Consume(char c) {
    SkipSpace();
    if (pos_ == text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  bool Fail(const std::string& what) {
    error_ = what + " at offset " + std::to_string(pos_);
    return false;
  }

  // Bounds the recursion on hostile headers; numpy's own nest two deep.
  static constexpr int kMaxDepth = 32;

  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  std::string error_;
};

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

Result<Header> ParseHeader(std::string_view text, const std::string& path) {
  std::map<std::string, Literal> dict;
  HeaderParser parser(text);
  if (!parser.ParseDict(&dict)) {
    constexpr std::size_t kShown = 200;
    const std::string shown(text.substr(0, kShown));
    return BadHeader(path, "cannot parse it: " + parser.error() + ": " + shown +
                               (text.size() > kShown ? "..." : ""));
  }
  Header header;
  const auto descr = dict.find("descr");
  if (descr == dict.end()) return BadHeader(path, "no 'descr'");
  if (descr->second.kind == Literal::Kind::kList) {
    return Status::Unsupported(path + ": structured dtypes (a list 'descr') are not supported");
  }
  if (descr->second.kind != Literal::Kind::kString)
    return BadHeader(path, "'descr' is not a string");
  header.descr = descr->second.text;

  const auto fortran_order = dict.find("fortran_order");
  if (fortran_order == dict.end()) return BadHeader(path, "no 'fortran_order'");
  if (fortran_order->second.kind != Literal::Kind::kBool) {
    return BadHeader(path, "'fortran_order' is not True or False");
  }
  header.fortran_order = fortran_order->second.flag;

  const auto shape = dict.find("shape");
  if (shape == dict.end()) return BadHeader(path, "no 'shape'");
  if (shape->second.kind != Literal::Kind::kTuple) return BadHeader(path, "'shape' is not a tuple");
  for (const Literal& extent : shape->second.items) {
    if (extent.kind != Literal::Kind::kInt) return BadHeader(path, "'shape' holds a non-integer");
    if (extent.number < 0) return BadHeader(path, "'shape' holds a negative dimension");
    header.shape.push_back(extent.number);
  }
  return header;
}

// What a 'descr' says about the data.
struct ElementType {
  DType dtype = DType::kUInt8;
  bool raw = false;           // numpy void ('V'): needs a logical dtype
  bool swap = false;          // stored in the other byte order
  std::size_t swap_unit = 1;  // bytes reversed together: a complex swaps each part
};

Result<ElementType> ParseDescr(const std::string& descr, const std::string& path) {
  const Status unsupported = Status::Unsupported(path + ": unsupported dtype '" + descr + "'");
  std::string_view code = descr;
  char order = '=';
  if (!code.empty() && std::string_view("<>|=").find(code.front()) != std::string_view::npos) {
    order = code.front();
    code.remove_prefix(1);
  }
  if (code.size() < 2 || code.size() > 3 ||
      code.find_first_not_of("0123456789", 1) != std::string_view::npos) {
    return unsupported;
  }
  const std::size_t size = std::stoul(std::string(code.substr(1)));
  const auto* const type =
      std::find_if(std::begin(kNpyTypes), std::end(kNpyTypes),
                   [&](const NpyType& t) { return t.kind == code.front() && t.size == size; });
  if (type == std::end(kNpyTypes)) return unsupported;
  ElementType element;
  element.dtype = type->dtype;
  element.raw = type->kind == 'V';
  element.swap = !element.raw && size > 1 && order == (kLittleEndian ? '>' : '<');
  element.swap_unit = type->kind == 'c' ? size / 2 : size;
  return element;
}

// Number of elements, or nullopt when it overflows.
std::optional<std::int64_t> CountElements(const std::vector<std::int64_t>& shape) {
  std::int64_t count = 1;
  for (std::int64_t extent : shape) {
    if (extent != 0 && count > std::numeric_limits<std::int64_t>::max() / extent) {
      return std::nullopt;
    }
    count *= extent;
  }
  return count;
}

// --- Writing -----------------------------------------------------------------

std::string ShapeTuple(const std::vector<std::int64_t>& shape) {
  std::string tuple = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) tuple += ", ";
    tuple += std::to_string(shape[i]);
  }
  return tuple + (shape.size() == 1 ? ",)" : ")");
}

// Magic, version, header length and the header padded with spaces to a
// multiple of kAlignment. Version 1.0 unless the header needs more than its
// 2-byte length.
std::string EncodePreambleAndHeader(const std::string& descr,
                                    const std::vector<std::int64_t>& shape) {
  const std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + ShapeTuple(shape) + ", }";
  const auto padded_length = [&](std::size_t length_bytes) {
    const std::size_t preamble = kMagic.size() + 2 + length_bytes;
    const std::size_t total = preamble + dict.size() + 1;  // + '\n'
    return (total + kAlignment - 1) / kAlignment * kAlignment - preamble;
  };
  std::size_t length_bytes = 2;
  std::size_t header_length = padded_length(length_bytes);
  if (header_length > 0xffff) {
    length_bytes = 4;
    header_length = padded_length(length_bytes);
  }
  std::string out(kMagic);
  out += static_cast<char>(length_bytes == 2 ? 1 : 2);
  out += '\0';
  for (std::size_t i = 0; i < length_bytes; ++i) {
    out += static_cast<char>((header_length >> (8 * i)) & 0xff);
  }
  out += dict;
  out.append(header_length - dict.size() - 1, ' ');
  out += '\n';
  return out;
}

}  // namespace

Result<LoadedTensor> ReadNpy(const std::string& path, std::optional<DType> logical_dtype) {
  Result<MappedFile> file = MapFile(path);
  if (!file.ok()) return file.status();
  Result<Preamble> preamble = ReadPreamble(file.value(), path);
  if (!preamble.ok()) return preamble.status();
  Result<Header> header = ParseHeader(preamble->header, path);
  if (!header.ok()) return header.status();
  Result<ElementType> element = ParseDescr(header->descr, path);
  if (!element.ok()) return element.status();
  if (element->raw && !logical_dtype) {
    return Status::InvalidInput(path + ": raw '" + header->descr +
                                "' data needs a logical dtype (bfloat16, float16, float8_*)");
  }

  const std::size_t element_size = DTypeSize(element->dtype);
  const std::optional<std::int64_t> count = CountElements(header->shape);
  // At most 16 bytes an element: the byte count fits too.
  if (!count || *count > std::numeric_limits<std::int64_t>::max() / 16) {
    return BadHeader(path, "'shape' " + ShapeToString(header->shape) + " is too large");
  }
  const std::size_t data_bytes = static_cast<std::size_t>(*count) * element_size;
  const std::size_t file_bytes = file->size - preamble->data_offset;
  const std::string expected = "expected " + std::to_string(data_bytes) + " bytes of data for " +
                               header->descr + " " + ShapeToString(header->shape);
  if (file_bytes < data_bytes) {
    return Status::InvalidInput(path + ": truncated: " + expected + ", the file has " +
                                std::to_string(file_bytes));
  }
  if (file_bytes > data_bytes) {
    return Status::InvalidInput(path + ": size mismatch: " + expected + ", the file has " +
                                std::to_string(file_bytes) + " (extra bytes at the end)");
  }

  LoadedTensor tensor;
  tensor.source = path;
  const std::byte* data = reinterpret_cast<const std::byte*>(file->data) + preamble->data_offset;
  tensor.owner = file->owner;
  if (element->swap) {
    auto swapped = std::make_shared<std::vector<std::byte>>(data, data + data_bytes);
    for (std::size_t i = 0; i < data_bytes; i += element->swap_unit) {
      std::reverse(swapped->data() + i, swapped->data() + i + element->swap_unit);
    }
    data = swapped->data();
    tensor.owner = std::move(swapped);
  }
  if (header->fortran_order) {
    // Column-major: the C-order strides of the reversed shape, reversed.
    std::vector<std::int64_t> reversed(header->shape.rbegin(), header->shape.rend());
    tensor.view = TensorView::Contiguous(element->dtype, std::move(reversed), data);
    std::reverse(tensor.view.shape.begin(), tensor.view.shape.end());
    std::reverse(tensor.view.strides.begin(), tensor.view.strides.end());
  } else {
    tensor.view = TensorView::Contiguous(element->dtype, std::move(header->shape), data);
  }
  if (logical_dtype) {
    Status status = ApplyLogicalDType(&tensor.view, *logical_dtype, path);
    if (!status.ok()) return status;
  }
  return tensor;
}

Status WriteNpy(const std::string& path, const TensorView& view) {
  const DType stored = StorageDType(view.dtype);
  const auto* const type = std::find_if(std::begin(kNpyTypes), std::end(kNpyTypes),
                                        [&](const NpyType& t) { return t.dtype == stored; });
  const char order = type->size == 1 ? '|' : (kLittleEndian ? '<' : '>');
  const std::string descr = order + std::string(1, type->kind) + std::to_string(type->size);
  const std::string header = EncodePreambleAndHeader(descr, view.shape);

  std::vector<std::byte> scratch;
  const std::byte* data = CContiguousBytes(view, &scratch);
  const std::size_t data_bytes = static_cast<std::size_t>(view.NumElements()) * type->size;

  std::unique_ptr<std::FILE, FileCloser> out(std::fopen(path.c_str(), "wb"));
  if (!out) return Status::IoError(path + ": cannot create: " + std::strerror(errno));
  if (std::fwrite(header.data(), 1, header.size(), out.get()) != header.size() ||
      std::fwrite(data, 1, data_bytes, out.get()) != data_bytes) {
    return Status::IoError(path + ": cannot write: " + std::strerror(errno));
  }
  if (std::fclose(out.release()) != 0) {
    return Status::IoError(path + ": cannot write: " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace opverify
