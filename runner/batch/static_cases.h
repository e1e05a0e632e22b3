// A task file's own case count without running it: opverify-batch --list and
// --dry-run never import user code. The source is read with Python's `ast` in
// the embedded interpreter (opverify_runtime/static_cases.py): a count where
// the source makes it certain (a literal CASES list), else none, and why.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/common/status.h"

namespace opverify {

struct StaticCaseCount {
  std::optional<int> count;  // unset: known only when the task runs
  std::string why;           // why it is unset
};

// One count per path, in order. Starts the embedded interpreter for the
// call (once per process: Python cannot be started twice); an error when it
// does not start.
Result<std::vector<StaticCaseCount>> CountOwnCases(const std::vector<std::string>& task_files);

}  // namespace opverify
