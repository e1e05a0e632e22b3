// Every report is written whole to <path>.tmp, then renamed over <path>: a
// reader (or a crash) never sees half a report.
#pragma once

#include <string>

#include "runner/common/status.h"

namespace opverify {

Status WriteReportFile(const std::string& path, const std::string& content);

}  // namespace opverify
