// report.html: one self-contained page (no script, no network: charts are
// inline SVG) with the pass/fail grid of operators x dtypes, the speedup
// distribution, the slowest and least precise operators and every failure
// with a command that runs its operator again. Every string from a run (an
// operator's name, an error message) is escaped.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "runner/common/status.h"

namespace opverify {

// `summary`: summary.json as run_report.cc builds it; `repro`: per operator.
Status WriteHtmlReport(const std::string& path, const nlohmann::ordered_json& summary,
                       const std::map<std::string, std::string>& repro);

}  // namespace opverify
