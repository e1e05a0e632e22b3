#include "runner/common/file_name.h"

namespace opverify {
namespace {

bool Kept(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

}  // namespace

std::string SafeFileName(std::string_view text, std::size_t max_bytes, std::string_view fallback) {
  std::string name;
  for (std::size_t i = 0; i < text.size() && name.size() < max_bytes; ++i) {
    const char c = text[i];
    // A dot only between two kept characters: never "..", never leading.
    const bool dot =
        c == '.' && !name.empty() && Kept(name.back()) && i + 1 < text.size() && Kept(text[i + 1]);
    const char out = Kept(c) || dot ? c : '_';
    if (out == '_' && (name.empty() || name.back() == '_')) continue;
    if (name.empty() && out == '-') continue;
    name += out;
  }
  while (!name.empty() && (name.back() == '_' || name.back() == '.')) name.pop_back();
  return name.empty() ? std::string(fallback) : name;
}

}  // namespace opverify
