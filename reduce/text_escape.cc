#include "reduce/text_escape.h"

#include <algorithm>

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
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  }
  text = TerminalSafe(text);
  if (limit > 0 && CodePointCount(text) > limit) text = Utf8Prefix(text, limit) + "...";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      // GFM splits a table row at every pipe not escaped by a backslash, and a
      // backslash escapes the character after it: both get a backslash.
      case '|':
        out += "\\|";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

namespace {

// The longest run of backticks in `text`.
std::size_t LongestBacktickRun(const std::string& text) {
  std::size_t longest = 0, run = 0;
  for (char ch : text) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

}  // namespace

std::string MarkdownCode(const std::string& text) {
  std::string clean = text;
  for (auto& ch : clean) {
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  }
  clean = TerminalSafe(clean);
  const std::string fence(LongestBacktickRun(clean) + 1, '`');
  // A space inside the fence when the text starts or ends with a backtick.
  const bool pad = !clean.empty() && (clean.front() == '`' || clean.back() == '`');
  return fence + (pad ? " " : "") + clean + (pad ? " " : "") + fence;
}

std::string MarkdownCodeBlock(const std::string& text, const std::string& language) {
  const std::string clean = TerminalSafe(text);
  const std::string fence(std::max<std::size_t>(3, LongestBacktickRun(clean) + 1), '`');
  return fence + language + "\n" + clean + "\n" + fence + "\n";
}

}  // namespace opverify
