#include "runner/manifest/manifest_document.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <utility>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "runner/common/json_text.h"
#include "runner/common/user_file.h"
#include "runner/manifest/jobs_schema.h"

namespace opverify::manifest_internal {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxSchemaErrors = 8;  // more would bury the first
constexpr std::size_t kMaxValueChars = 60;   // of an offending value quoted in a message
constexpr std::size_t kMaxManifestBytes = 16u << 20;  // a manifest larger than this is refused
constexpr std::size_t kMaxStringChars = 4096;         // of any one string in a manifest
constexpr int kMaxDepth = 32;                         // of arrays and objects in a manifest

// RFC 6901: "~" and "/" inside a key.
std::string EscapePointerToken(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// nlohmann counts lines and columns this way: `byte` characters read, a
// newline starting a new line at column 0.
std::pair<std::size_t, std::size_t> LineColumn(const std::string& text, std::size_t byte) {
  std::size_t line = 1;
  std::size_t column = 0;
  for (std::size_t i = 0; i < byte; ++i) {
    if (i < text.size() && text[i] == '\n') {
      ++line;
      column = 0;
    } else {
      ++column;
    }
  }
  return {line, std::max<std::size_t>(column, 1)};
}

// nlohmann's message without its "[json.exception...] parse error at line
// L, column C: " prefix (we print the position ourselves).
std::string ParseErrorReason(const std::string& what) {
  const std::size_t column = what.find("column ");
  const std::size_t colon = column == std::string::npos ? column : what.find(": ", column);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

// The compiled-in schema, parsed once. valijson refusing it is a bug of
// ours, reported (as Internal) by every load.
struct CompiledSchema {
  json document;
  json validated;  // what valijson checks: the document without the sweep's uniqueItems
  valijson::Schema schema;
  std::string error;
};

const CompiledSchema& JobsSchema() {
  static const std::unique_ptr<CompiledSchema> compiled = [] {
    auto out = std::make_unique<CompiledSchema>();
    try {
      out->document = json::parse(JobsSchemaText());
      // valijson compares every pair of a sweep's values for uniqueItems: a
      // list of 100,000 took minutes before the case cap could refuse it.
      // The resolver checks that they are distinct instead, after the cap
      // (RepeatedSweepValue, runner/cases/cases.h), in n log n.
      out->validated = out->document;
      for (auto& parameter : out->validated["definitions"]["sweep"]["patternProperties"])
        parameter.erase("uniqueItems");
      valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
      valijson::adapters::NlohmannJsonAdapter adapter(out->validated);
      parser.populateSchema(adapter, out->schema);
    } catch (const std::exception& e) {
      out->error = e.what();
    }
    return out;
  }();
  return *compiled;
}

// valijson's context ("<root>", "[operators]", "[3]") as a JSON pointer.
std::string PointerOf(const std::vector<std::string>& context) {
  std::string pointer;
  for (const std::string& part : context) {
    if (part == "<root>") continue;
    const bool bracketed = part.size() >= 2 && part.front() == '[' && part.back() == ']';
    pointer += "/" + EscapePointerToken(bracketed ? part.substr(1, part.size() - 2) : part);
  }
  return pointer;
}

// "value: <JSON>" of the scalar at `pointer`, for a message ("" for objects
// and arrays, whose errors already say what is wrong inside them).
std::string ValueAt(const json& document, const std::string& pointer) {
  try {
    const json& value = document.at(json::json_pointer(pointer));
    if (value.is_structured()) return "";
    std::string text = JsonText(value);
    if (text.size() > kMaxValueChars) text = text.substr(0, kMaxValueChars) + "...";
    return "value: " + text;
  } catch (const json::exception&) {
    return "";
  }
}

// What the schema allows for a field, when valijson's message does not say:
// the schema's "definitions" are named after the fields they describe.
std::string Allowed(const json& schema, const std::string& pointer, const std::string& what) {
  const std::string field = pointer.substr(pointer.rfind('/') + 1);
  const json* definition = nullptr;
  if (const auto definitions = schema.find("definitions"); definitions != schema.end()) {
    if (const auto it = definitions->find(field); it != definitions->end()) definition = &*it;
  }
  if (!definition) return "";
  if (what.find("enum") != std::string::npos && definition->contains("enum")) {
    std::vector<std::string> values;
    for (const json& value : (*definition)["enum"]) values.push_back(value.dump());
    return "; allowed: " + Join(values, ", ");
  }
  if (what.find("'type'") != std::string::npos && definition->contains("type")) {
    return "; expected: " + (*definition)["type"].dump();
  }
  if (what.find("'pattern'") != std::string::npos && definition->contains("pattern")) {
    return "; must match: " + (*definition)["pattern"].dump();
  }
  return "";
}

// "<line>:<column>: " of the number nlohmann quotes in `what` ("number
// overflow parsing '1e400'"), or "" when it cannot be found.
std::string OverflowPosition(const std::string& text, const std::string& what) {
  const std::size_t open = what.find('\'');
  const std::size_t close = open == std::string::npos ? open : what.find('\'', open + 1);
  if (close == std::string::npos || close == open + 1) return " ";
  const std::size_t at = text.find(what.substr(open + 1, close - open - 1));
  if (at == std::string::npos) return " ";
  const auto [line, column] = LineColumn(text, at + 1);
  return std::to_string(line) + ":" + std::to_string(column) + ": ";
}

// Refuses any string (key or value) longer than kMaxStringChars before the
// schema's patterns see it (std::regex recurses once per character: a string
// of a few hundred thousand overflows the stack), and nesting deeper than
// kMaxDepth (no manifest needs more than a few levels).
Status CheckBounds(const ManifestFile& file, const json& value, const std::string& pointer,
                   int depth) {
  if (depth > kMaxDepth) {
    return Status::InvalidInput(At(file.display, pointer.substr(0, 200)) + ": nested deeper than " +
                                std::to_string(kMaxDepth) + " levels");
  }
  const auto too_long = [&](const std::string& where, std::size_t size) {
    return Status::InvalidInput(At(file.display, where) + ": a string of " + std::to_string(size) +
                                " characters (at most " + std::to_string(kMaxStringChars) +
                                " are allowed in a manifest)");
  };
  if (value.is_string()) {
    const std::size_t size = value.get_ref<const std::string&>().size();
    return size > kMaxStringChars ? too_long(pointer, size) : Status::Ok();
  }
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string inner =
          pointer + "/" + EscapePointerToken(it.key().substr(0, kMaxStringChars));
      if (it.key().size() > kMaxStringChars) return too_long(inner, it.key().size());
      if (Status s = CheckBounds(file, it.value(), inner, depth + 1); !s.ok()) return s;
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (Status s = CheckBounds(file, value[i], pointer + "/" + std::to_string(i), depth + 1);
          !s.ok()) {
        return s;
      }
    }
  }
  return Status::Ok();
}

}  // namespace

// "<file>: <JSON pointer>", the prefix of every message about a value.
std::string At(const std::string& file, const std::string& pointer) {
  return file + ": " + (pointer.empty() ? std::string("(root)") : pointer);
}

std::string Join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

Result<json> ReadJson(const ManifestFile& file) {
  Result<std::string> read = ReadUserFile(file.absolute.string(), "manifest", kMaxManifestBytes);
  if (!read.ok()) {
    // Messages name the file as the user did.
    std::string message = read.status().message();
    const std::string absolute = file.absolute.string();
    if (message.rfind(absolute, 0) == 0) message = file.display + message.substr(absolute.size());
    return read.status().code() == Status::Code::kNotFound ? Status::NotFound(message)
                                                           : Status::InvalidInput(message);
  }
  const std::string& text = read.value();
  json document;
  try {
    document = json::parse(text);
  } catch (const json::parse_error& e) {
    const auto [line, column] = LineColumn(text, e.byte);
    return Status::InvalidInput(file.display + ":" + std::to_string(line) + ":" +
                                std::to_string(column) + ": " + ParseErrorReason(e.what()));
  } catch (const json::exception& e) {
    // out_of_range 406: a number beyond double's range (1e400). nlohmann
    // gives no position; the token it quotes is found in the text.
    return Status::InvalidInput(file.display + ":" + OverflowPosition(text, e.what()) +
                                ParseErrorReason(e.what()) + " (beyond a double's range)");
  }
  if (Status bounded = CheckBounds(file, document, "", 0); !bounded.ok()) return bounded;
  return document;
}

// valijson reports each failure and then every enclosing schema that failed
// because of it ("Failed to validate item #3 in array."); only the failures
// themselves are kept.
Status ValidateAgainstSchema(const ManifestFile& file, const json& document) {
  const CompiledSchema& compiled = JobsSchema();
  if (!compiled.error.empty()) {
    return Status::Internal("schemas/jobs.schema.json (compiled in) is refused by valijson: " +
                            compiled.error);
  }
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter adapter(document);
  if (validator.validate(compiled.schema, adapter, &results)) return Status::Ok();

  static const std::string kUnknownProperty =
      "Object contains a property that could not be validated using 'properties' or "
      "'additionalProperties' constraints: '";
  std::vector<std::string> failures;
  std::vector<std::string> enclosing;
  valijson::ValidationResults::Error error;
  while (results.popError(error)) {
    std::string pointer = PointerOf(error.context);
    std::string what = error.description;
    if (what.rfind(kUnknownProperty, 0) == 0 && what.size() >= kUnknownProperty.size() + 2) {
      const std::string key =
          what.substr(kUnknownProperty.size(), what.size() - kUnknownProperty.size() - 2);
      pointer += "/" + EscapePointerToken(key);
      what = "unknown field '" + key + "' (not allowed here by schemas/jobs.schema.json)";
    } else {
      const std::string value = ValueAt(document, pointer);
      const std::string allowed = Allowed(compiled.document, pointer, what);
      if (!value.empty() || !allowed.empty()) {
        what += " (" + (value.empty() ? allowed.substr(2) : value + allowed) + ")";
      }
    }
    std::string line = At(file.display, pointer) + ": " + what;
    auto& list = error.description.rfind("Failed to validate", 0) == 0 ? enclosing : failures;
    if (std::find(list.begin(), list.end(), line) == list.end()) list.push_back(std::move(line));
  }
  // Only enclosing failures: a constraint failed without saying why; the
  // innermost enclosing one (reported first) is the best place to look.
  if (failures.empty() && !enclosing.empty()) failures.push_back(enclosing.front());
  std::vector<std::string>& lines = failures;
  const std::size_t total = lines.size();
  if (lines.size() > kMaxSchemaErrors) {
    lines.resize(kMaxSchemaErrors);
    lines.push_back("(" + std::to_string(total - kMaxSchemaErrors) + " more)");
  }
  return Status::InvalidInput(Join(lines, "\n"));
}

}  // namespace opverify::manifest_internal
