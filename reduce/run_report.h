// Reports of a run folder, rebuilt from its HDF5 shards alone: each
// operator's verify_result.json (the seed's format) and summary.json.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/status.h"

namespace opverify {

struct RunTotals {
  int operators = 0;
  int cases = 0;
  int passed = 0;
  int failed = 0;
};

// Writes <run_dir>/ops/<op>/verify_result.json and <run_dir>/summary.json.
// `problems`: cases the store could not read (listed in the summary).
Result<RunTotals> WriteRunReports(const std::string& run_dir, const nlohmann::json& run_info);

}  // namespace opverify
