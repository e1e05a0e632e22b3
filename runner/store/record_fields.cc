#include "runner/store/record_fields.h"

#include <optional>
#include <sstream>
#include <vector>

namespace opverify {
namespace {

using nlohmann::json;

// JSON types, as a set.
enum Type : unsigned {
  kNull = 1,
  kBool = 2,
  kInteger = 4,  // a number without a fraction
  kNumber = 8 | kInteger,
  kString = 16,
  kArray = 32,
  kObject = 64,
};

// A field of one of a record's JSON attributes: `path` is a JSON pointer
// whose token "*" stands for every element of an array or value of an object.
// `kind` nullopt: records of every kind.
struct Field {
  std::optional<RecordKind> kind;
  const char* attribute;
  const char* path;
  unsigned types;
};

// What the readers rely on (reduce/, runner/store/case_table.cc,
// runner/batch/stored_run.cc, runner/bench's and runner/verify's from-JSON
// functions). Parents come before their fields.
constexpr RecordKind kCase = RecordKind::kCase;
constexpr RecordKind kFacts = RecordKind::kOperator;
constexpr RecordKind kShape = RecordKind::kBenchShape;
constexpr RecordKind kItem = RecordKind::kBenchItem;
const Field kFields[] = {
    {std::nullopt, "params", "", kObject | kNull},
    {std::nullopt, "input_desc", "", kArray},
    {std::nullopt, "input_desc", "/*/type", kString},
    {std::nullopt, "input_desc", "/*/dtype", kString},
    {std::nullopt, "input_desc", "/*/items/*/dtype", kString},
    {std::nullopt, "outputs", "", kArray},
    {std::nullopt, "outputs", "/*", kObject},
    {std::nullopt, "outputs", "/*/passed", kBool},
    {std::nullopt, "outputs", "/*/dtype", kString | kNull},
    {std::nullopt, "outputs", "/*/route", kString | kNull},
    {std::nullopt, "outputs", "/*/standard", kString | kNull},
    {std::nullopt, "outputs", "/*/error_type", kString | kNull},
    {std::nullopt, "outputs", "/*/metrics", kObject | kNull},  // null: not compared
    {std::nullopt, "timings", "", kObject},
    {std::nullopt, "timings", "/*", kNumber},
    {std::nullopt, "ab", "", kObject | kNull},
    {std::nullopt, "ab", "/attempts", kArray},
    {std::nullopt, "ab", "/reference_trust", kObject | kNull},
    {std::nullopt, "ab", "/reference_trust/reason", kString},
    {std::nullopt, "ab", "/reference_trust/fp64", kObject | kNull},
    {std::nullopt, "ab", "/reference_trust/fp64/passed", kBool},
    {std::nullopt, "ab", "/reference_trust/device_reference", kObject | kNull},
    {std::nullopt, "ab", "/reference_trust/device_reference/passed", kBool},
    {std::nullopt, "extra", "", kObject},
    {kCase, "extra", "/failure", kObject | kNull},
    {kCase, "extra", "/details", kObject | kNull},
    {kCase, "extra", "/details/waivers", kArray},
    {kFacts, "extra", "/case_count", kInteger},
    {kFacts, "extra", "/task_file", kString},
    {kFacts, "extra", "/impl_name", kString},
    {kFacts, "extra", "/lint_enabled", kBool},
    {kFacts, "extra", "/non_compute", kBool},
    {kFacts, "extra", "/left_out", kObject},
    {kFacts, "extra", "/left_out/*", kString},
    {kFacts, "extra", "/environment", kObject | kNull},
    {kFacts, "extra", "/environment/device", kObject},
    {kFacts, "extra", "/environment/device/name", kString},
    {kFacts, "extra", "/environment/device/backend", kString},
    {kFacts, "extra", "/environment/device/compute_unit", kString},
    {kShape, "extra", "/case_id", kString},
    {kShape, "extra", "/shape", kObject},
    {kShape, "extra", "/shape/case_idx", kInteger},
    {kShape, "extra", "/shape/input_dtypes", kArray},
    {kShape, "extra", "/shape/input_dtypes/*", kString},
    {kShape, "extra", "/shape/passed", kBool},
    {kShape, "extra", "/shape/above_roofline", kBool},
    {kShape, "extra", "/shape/error_type", kString},
    {kShape, "extra", "/shape/error_msg", kString},
    {kShape, "extra", "/shape/warnings", kArray},
    {kShape, "extra", "/shape/warnings/*", kString},
    {kShape, "extra", "/shape/framework", kObject | kNull},
    {kShape, "extra", "/shape/framework/measured", kBool},
    {kShape, "extra", "/shape/implementation", kObject | kNull},
    {kShape, "extra", "/shape/implementation/measured", kBool},
    {kItem, "extra", "/wall_s", kNumber},
    {kItem, "extra", "/settings", kObject},
    {kItem, "extra", "/settings/warmup", kInteger},
    {kItem, "extra", "/settings/repeats", kInteger},
    {kItem, "extra", "/settings/max_repeats", kInteger},
    {kItem, "extra", "/settings/profile_iterations", kInteger},
    {kItem, "extra", "/settings/adaptive", kBool},
    {kItem, "extra", "/settings/flush_l2", kBool},
    {kItem, "extra", "/settings/skip_framework", kBool},
    {kItem, "extra", "/settings/rse_target", kNumber},
    {kItem, "extra", "/settings/max_seconds", kNumber},
    {kItem, "extra", "/settings/review_speedup", kNumber},
};

unsigned TypeOf(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return kNull;
    case json::value_t::boolean:
      return kBool;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return kInteger;
    case json::value_t::number_float:
      return kNumber & ~kInteger;
    case json::value_t::string:
      return kString;
    case json::value_t::array:
      return kArray;
    case json::value_t::object:
      return kObject;
    default:
      return 0;  // binary, discarded: nothing a reader expects
  }
}

std::string TypeNames(unsigned types) {
  std::string names;
  const auto add = [&](unsigned bit, const char* name) {
    if ((types & bit) != bit) return;
    names += (names.empty() ? "" : " or ") + std::string(name);
    types &= ~bit;
  };
  add(kNumber, "a number");
  add(kInteger, "an integer");
  add(kNumber & ~kInteger, "a number with a fraction");
  add(kNull, "null");
  add(kBool, "a boolean");
  add(kString, "a string");
  add(kArray, "an array");
  add(kObject, "an object");
  return names.empty() ? "something JSON cannot hold" : names;
}

std::vector<std::string> Tokens(const std::string& path) {
  std::vector<std::string> tokens;
  std::istringstream in(path);
  std::string token;
  std::getline(in, token, '/');  // the empty token before the first '/'
  while (std::getline(in, token, '/')) tokens.push_back(token);
  return tokens;
}

// A key as a JSON pointer token ("a/b" -> "a~1b").
std::string PointerToken(const std::string& key) {
  std::string token;
  for (char c : key) token += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return token;
}

// The first value at `tokens[at..]` under `value` whose type is not in
// `types`: *wrong, with its pointer in *where; false when all that exist
// have their type.
bool FindWrong(const json& value, const std::vector<std::string>& tokens, std::size_t at,
               unsigned types, std::string* where, const json** wrong) {
  if (at == tokens.size()) {
    *wrong = &value;
    return (TypeOf(value) & types) == 0;
  }
  const std::string& token = tokens[at];
  if (token == "*") {
    if (!value.is_array() && !value.is_object()) return false;
    std::size_t i = 0;
    for (auto it = value.begin(); it != value.end(); ++it, ++i) {
      const std::string key = value.is_array() ? std::to_string(i) : PointerToken(it.key());
      if (FindWrong(it.value(), tokens, at + 1, types, where, wrong)) {
        *where = "/" + key + *where;
        return true;
      }
    }
    return false;
  }
  if (!value.is_object()) return false;
  const auto found = value.find(token);
  if (found == value.end()) return false;
  if (!FindWrong(*found, tokens, at + 1, types, where, wrong)) return false;
  *where = "/" + token + *where;
  return true;
}

const json& Attribute(const CaseRecord& record, const std::string& name) {
  if (name == "params") return record.params;
  if (name == "input_desc") return record.input_desc;
  if (name == "outputs") return record.outputs;
  if (name == "timings") return record.timings;
  if (name == "ab") return record.ab;
  return record.extra;
}

}  // namespace

Status CheckRecordFields(const CaseRecord& record, const std::string& where) {
  for (const Field& field : kFields) {
    if (field.kind && *field.kind != record.kind) continue;
    // A pointer, not a reference: g++ 13 takes the string argument's temporary for the referent.
    const json* value = &Attribute(record, field.attribute);
    std::string pointer;
    const json* wrong = nullptr;
    if (!FindWrong(*value, Tokens(field.path), 0, field.types, &pointer, &wrong)) continue;
    const std::string what = TypeNames(TypeOf(*wrong));
    return Status::InvalidInput(where + ": attribute '" + field.attribute +
                                "': " + (pointer.empty() ? "(the whole value)" : pointer) + " is " +
                                what + ", not " + TypeNames(field.types));
  }
  return Status::Ok();
}

}  // namespace opverify
