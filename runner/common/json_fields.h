// A struct's JSON fields listed once, so that writing and reading it cannot
// drift: a `...Fields(field, s)` template calls field(key, member) for each
// member, or field(key, member, omitted) for one left out of the JSON when
// `omitted`. FieldWriter puts the fields in an object (an unset optional as
// null, unless omitted), FieldReader takes them out: a field absent or null
// (or JSON that is no object) keeps its default; one of another type throws
// nlohmann::json::type_error, as json::value() does.
#pragma once

#include <optional>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace opverify::json_fields {

template <typename T>
void Read(const nlohmann::json& j, const char* key, T& field) {
  if (j.is_object() && j.contains(key) && !j[key].is_null()) field = j[key].get<T>();
}

template <typename T>
void Read(const nlohmann::json& j, const char* key, std::optional<T>& field) {
  if (j.is_object() && j.contains(key) && !j[key].is_null()) field = j[key].get<T>();
}

// `j[key]` read into `field` when it is an object; unset otherwise (a
// nested struct of a document whose other parts are not this reader's).
template <typename T>
void ReadIfObject(const nlohmann::json& j, const char* key, std::optional<T>& field) {
  if (j.is_object() && j.contains(key) && j[key].is_object()) field = j[key].get<T>();
}

// Whether `value` has the JSON type a T is read from (any type for a json).
template <typename T>
bool Fits(const nlohmann::json& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value.is_boolean();
  } else if constexpr (std::is_integral_v<T>) {
    return value.is_number_integer();
  } else if constexpr (std::is_floating_point_v<T>) {
    return value.is_number();
  } else if constexpr (std::is_same_v<T, std::string>) {
    return value.is_string();
  } else {
    return true;
  }
}

// Read, where a value of another JSON type also keeps the default: for a
// file a person may have edited (summary.json), not a checked record.
template <typename T>
void ReadIfFits(const nlohmann::json& j, const char* key, T& field) {
  if (j.is_object() && j.contains(key) && Fits<T>(j[key])) field = j[key].get<T>();
}

template <typename T>
void ReadIfFits(const nlohmann::json& j, const char* key, std::optional<T>& field) {
  if (j.is_object() && j.contains(key) && !j[key].is_null() && Fits<T>(j[key]))
    field = j[key].get<T>();
}

struct FieldWriter {
  nlohmann::json& j;
  template <typename T>
  void operator()(const char* key, const T& value, bool omitted = false) const {
    if (!omitted) j[key] = value;
  }
  template <typename T>
  void operator()(const char* key, const std::optional<T>& value, bool omitted = false) const {
    if (!omitted) j[key] = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  }
};

struct FieldReader {
  const nlohmann::json& j;
  template <typename T>
  void operator()(const char* key, T& value, bool /*omitted*/ = false) const {
    Read(j, key, value);
  }
};

// FieldReader with ReadIfFits.
struct FittingFieldReader {
  const nlohmann::json& j;
  template <typename T>
  void operator()(const char* key, T& value, bool /*omitted*/ = false) const {
    ReadIfFits(j, key, value);
  }
};

}  // namespace opverify::json_fields
