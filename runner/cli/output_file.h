// The result file a command writes (verify_result.json, perf_result.json):
// its folder made before anything runs (the executor's log goes beside it),
// the JSON written with invalid UTF-8 replaced. Each reports its failure on
// stderr, naming the command and the path.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

namespace opverify {

bool MakeOutputFolder(const char* command, const std::filesystem::path& output);
bool WriteOutputJson(const char* command, const std::filesystem::path& output, const nlohmann::ordered_json& value);

}  // namespace opverify
