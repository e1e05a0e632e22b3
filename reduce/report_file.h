// Every report is written whole to <path>.tmp, then renamed over <path>: a
// reader (or a crash) never sees half a report.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runner/common/status.h"

namespace opverify {

Status WriteReportFile(const std::string& path, const std::string& content);

// A JSON report: indented by two, invalid UTF-8 replaced, a final newline.
Status WriteReportJson(const std::string& path, const nlohmann::ordered_json& value);

}  // namespace opverify
