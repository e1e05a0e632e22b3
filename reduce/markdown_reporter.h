// report.md: the totals, a row per operator (cases, verdicts, error types,
// speedup), the performance (geometric means, fast_p, what to review) and
// every failure, with a command per failing operator that runs it again.
#pragma once

#include "reduce/reporter.h"

namespace opverify {

class MarkdownReporter : public Reporter {
 public:
  Status ReportRun(const RunModel& run) override;
};

}  // namespace opverify
