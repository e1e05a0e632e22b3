// JSON as one line of text that any UTF-8 reader accepts: compact, and
// invalid UTF-8 in its strings (bytes from a file name, an operator's
// message) replaced by U+FFFD instead of a throw.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace opverify {

inline std::string JsonText(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace opverify
