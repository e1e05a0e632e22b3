// String formatting without iostreams. The Python module may be loaded into a
// process whose C++ runtime is not its own, where iostream locale facets
// crash; snprintf has no such state.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace opverify {

// printf into a std::string.
__attribute__((format(printf, 1, 2))) inline std::string Printf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  const int size = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string out(size > 0 ? static_cast<std::size_t>(size) : 0, '\0');
  if (size > 0) std::vsnprintf(out.data(), out.size() + 1, format, args);
  va_end(args);
  return out;
}

// The non-negative decimal number `text` is: digits only, at most nine of
// them (so it fits an int); nullopt for anything else.
inline std::optional<int> ParseDecimal(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace opverify
