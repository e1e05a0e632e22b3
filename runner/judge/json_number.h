// Reading back a number the judge wrote with JsonNumber (verdict_json.h):
// a JSON number, or the text "NaN", "Infinity" or "-Infinity" that JSON
// cannot hold as a number.
#pragma once

#include <limits>
#include <string>

#include <nlohmann/json.hpp>

namespace opverify {

// `value` as a double; NaN for "NaN" and for anything that is not a number.
inline double JsonNumberValue(const nlohmann::json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text == "Infinity") return std::numeric_limits<double>::infinity();
    if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace opverify
