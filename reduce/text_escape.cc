#include "reduce/text_escape.h"

#include "runner/common/utf8.h"

namespace opverify {

namespace {

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
    const long cp = NextCodePoint(text, &i);
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
  return limit > 0 && CodePointCount(text) > limit ? Utf8Prefix(text, limit) + "..." : ValidUtf8(text);
}

}  // namespace opverify
