#include "runner/common/utf8.h"

#include <algorithm>
#include <vector>

namespace opverify {

long NextCodePoint(std::string_view text, std::size_t* i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(*i);
  const int length = lead < 0x80 ? 1 : lead >= 0xC2 && lead <= 0xDF ? 2 : (lead >> 4) == 0xE ? 3
                     : lead >= 0xF0 && lead <= 0xF4                ? 4
                                                                    : 0;
  if (length == 0 || *i + length > text.size()) {
    ++*i;
    return -1;
  }
  long cp = length == 1 ? lead : lead & (0x7F >> length);
  for (int k = 1; k < length; ++k) {
    if ((byte(*i + k) & 0xC0) != 0x80) {
      ++*i;
      return -1;
    }
    cp = (cp << 6) | (byte(*i + k) & 0x3F);
  }
  // Shortest form only, no surrogates, nothing past U+10FFFF.
  const bool overlong = (length == 3 && cp < 0x800) || (length == 4 && cp < 0x10000);
  if (overlong || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
    ++*i;
    return -1;
  }
  *i += length;
  return cp;
}

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The byte ranges of the code points of `text` (an invalid byte is one).
struct Pieces {
  std::vector<std::size_t> starts;  // starts.back() == text.size()
  std::vector<bool> valid;
};

Pieces Split(std::string_view text) {
  Pieces pieces;
  for (std::size_t i = 0; i < text.size();) {
    pieces.starts.push_back(i);
    pieces.valid.push_back(NextCodePoint(text, &i) >= 0);
  }
  pieces.starts.push_back(text.size());
  return pieces;
}

// Code points [first, last) of `text`, invalid bytes replaced.
void Append(std::string_view text, const Pieces& pieces, std::size_t first, std::size_t last, std::string* out) {
  for (std::size_t k = first; k < last; ++k) {
    if (pieces.valid[k]) {
      out->append(text.substr(pieces.starts[k], pieces.starts[k + 1] - pieces.starts[k]));
    } else {
      out->append(kReplacement);
    }
  }
}

}  // namespace

std::string ValidUtf8(std::string_view text) {
  const Pieces pieces = Split(text);
  std::string out;
  out.reserve(text.size());
  Append(text, pieces, 0, pieces.valid.size(), &out);
  return out;
}

std::size_t CodePointCount(std::string_view text) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < text.size(); ++count) NextCodePoint(text, &i);
  return count;
}

std::string Utf8Prefix(std::string_view text, std::size_t count) {
  const Pieces pieces = Split(text);
  std::string out;
  Append(text, pieces, 0, std::min(count, pieces.valid.size()), &out);
  return out;
}

std::string CutMiddle(std::string_view text, std::size_t limit) {
  const Pieces pieces = Split(text);
  const std::size_t length = pieces.valid.size();
  std::string out;
  if (length <= limit) {
    Append(text, pieces, 0, length, &out);
    return out;
  }
  const std::size_t half = limit / 2;
  Append(text, pieces, 0, half, &out);
  out += "\n... [truncated " + std::to_string(length - limit) + " chars] ...\n";
  Append(text, pieces, length - half, length, &out);
  return out;
}

}  // namespace opverify
