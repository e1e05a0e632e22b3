// plan.json in a run folder: what the run set out to store, written by
// opverify-batch before any work starts (kept as it is by --resume), so
// that the reports and opverify-reduce can tell a finished run from one
// whose results are partly gone.
//   {"format": 1, "operators": [{"name": "softmax", "min_cases": 12}, ...]}
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/common/status.h"

namespace opverify {

inline constexpr char kRunPlanFile[] = "plan.json";

struct PlannedOperator {
  std::string name;
  // The cases known before the operator loads: its manifest sweep's size;
  // 0 when its task file's own cases decide (their count, with generated
  // edge cases, is stored with its results: the "operator" record's
  // case_count).
  int min_cases = 0;
};

struct RunPlan {
  std::vector<PlannedOperator> operators;
};

// Writes run_dir/plan.json (durably: written whole, fsync'd, then renamed).
Status WriteRunPlan(const std::string& run_dir, const RunPlan& plan);

// run_dir/plan.json; nullopt when there is none (a run folder written
// before plans were). A plan that cannot be read or parsed is an error
// naming the file.
Result<std::optional<RunPlan>> ReadRunPlan(const std::string& run_dir);

}  // namespace opverify
