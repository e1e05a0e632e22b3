#include "reduce/text_escape.h"

namespace opverify {

namespace {

// The next UTF-8 code point of `text` at `i` (advancing i), or -1 for a bad sequence (one byte eaten).
long NextCodePoint(const std::string& text, std::size_t& i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  int length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || i + length > text.size()) {
    ++i;
    return -1;
  }
  long cp = length == 1 ? c : c & (0x7F >> length);
  for (int k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      ++i;
      return -1;
    }
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  i += length;
  return cp;
}

bool XmlAllowed(long cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
         (cp >= 0x10000 && cp <= 0x10FFFF);
}

}  // namespace

std::string MarkupEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t start = i;
    const long cp = NextCodePoint(text, i);
    if (cp < 0 || !XmlAllowed(cp)) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      continue;
    }
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out.append(text, start, i - start);
    }
  }
  return out;
}

std::string MarkdownCell(std::string text, std::size_t limit) {
  for (auto& ch : text) {
    if (ch == '|' || ch == '\n' || ch == '\r') ch = ' ';
  }
  return limit > 0 && text.size() > limit ? text.substr(0, limit) + "..." : text;
}

}  // namespace opverify
