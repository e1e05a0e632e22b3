// ops/<op>/precision_report.md: seed 003's report (configuration, precision
// standards, results, MERE and MARE per case, criteria), plus the route and
// standard that decided each case.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/status.h"
#include "runner/store/case_record.h"

namespace opverify {

// `cases`: the operator's stored cases in order; `facts`: its operator row
// (environment, impl_name).
Status WritePrecisionReport(const std::string& path, const std::string& op_name,
                            const std::vector<const CaseRecord*>& cases, const nlohmann::json& facts);

}  // namespace opverify
