// A manifest file as a JSON document: read (a syntax error names the line and
// column) and checked against the compiled-in schemas/jobs.schema.json (each
// violation names the JSON pointer). Internal to the manifest library;
// manifest.cc resolves what passes into operators.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/status.h"

namespace opverify::manifest_internal {

// A manifest file: `display` as messages name it (relative paths stay
// relative to the working directory), `absolute` to open it.
struct ManifestFile {
  std::string display;
  std::filesystem::path absolute;
};

// "<file>: <JSON pointer>", the prefix of every message about a value.
std::string At(const std::string& file, const std::string& pointer);

std::string Join(const std::vector<std::string>& parts, const std::string& separator);

// The file's JSON. Errors: IoError when it cannot be read, InvalidInput
// "<file>:<line>:<column>: <reason>" for a syntax error.
Result<nlohmann::json> ReadJson(const ManifestFile& file);

// Every schema violation of `document`, one line each: "<file>: <pointer>:
// <what>", at most 8 and a count of the rest. Internal when valijson refuses
// the compiled-in schema itself.
Status ValidateAgainstSchema(const ManifestFile& file, const nlohmann::json& document);

}  // namespace opverify::manifest_internal
