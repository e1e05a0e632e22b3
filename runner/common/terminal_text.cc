#include "runner/common/terminal_text.h"

#include "runner/common/utf8.h"

namespace opverify {
namespace {

// Where the escape sequence starting at text[i] (an ESC or a C1 CSI/OSC/DCS
// introducer, `kind` being its second byte's meaning) ends: the index past it.
std::size_t SkipSequence(std::string_view text, std::size_t i, char kind) {
  if (kind == '[') {  // CSI: parameters and intermediates, then one final byte 0x40..0x7E
    while (i < text.size()) {
      const auto c = static_cast<unsigned char>(text[i++]);
      if (c >= 0x40 && c <= 0x7E) break;
    }
    return i;
  }
  if (kind == ']' || kind == 'P' || kind == 'X' || kind == '^' || kind == '_') {
    // OSC, DCS, SOS, PM, APC: a string ended by BEL or ST (ESC \ or U+009C).
    while (i < text.size()) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c == 0x07) return i + 1;
      if (c == 0x1B && i + 1 < text.size() && text[i + 1] == '\\') return i + 2;
      if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x9C)
        return i + 2;
      ++i;
    }
    return i;
  }
  return i;  // a two-byte escape: its second byte is already consumed
}

}  // namespace

std::string TerminalSafe(std::string_view text) {
  const std::string valid = ValidUtf8(text);
  std::string_view in = valid;
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size();) {
    const std::size_t start = i;
    const long cp = NextCodePoint(in, &i);
    if (cp == 0x1B) {
      if (i >= in.size()) break;
      const char kind = in[i];
      if (static_cast<unsigned char>(kind) < 0x80) ++i;  // ESC's second byte goes with it
      i = SkipSequence(in, i, kind);
      continue;
    }
    if (cp >= 0x80 && cp <= 0x9F) {  // C1: CSI (0x9B), OSC (0x9D), DCS (0x90), ...
      const char kind = cp == 0x9B ? '[' : cp == 0x9D ? ']' : cp == 0x90 ? 'P' : '\0';
      i = SkipSequence(in, i, kind);
      continue;
    }
    if ((cp < 0x20 && cp != '\n' && cp != '\t') || cp == 0x7F) continue;
    out.append(in, start, i - start);
  }
  return out;
}

std::string TerminalLine(std::string_view text, std::size_t limit) {
  const std::string safe = TerminalSafe(text);
  std::string line;
  line.reserve(safe.size());
  for (const char c : safe) {
    const bool space = c == '\n' || c == '\t' || c == ' ';
    if (space && (line.empty() || line.back() == ' ')) continue;
    line.push_back(space ? ' ' : c);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (CodePointCount(line) <= limit) return line;
  return Utf8Prefix(line, limit > 3 ? limit - 3 : 0) + "...";
}

}  // namespace opverify
