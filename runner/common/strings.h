// String formatting without iostreams. The Python module may be loaded into a
// process whose C++ runtime is not its own, where iostream locale facets
// crash; snprintf has no such state.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

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

}  // namespace opverify
