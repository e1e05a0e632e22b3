// summary.json (schemas/summary.schema.json): what the batch recorded of
// itself, the totals, where the time went, the performance, the error types
// and A/B classes, a row per operator, every failure, and the problems.
#pragma once

#include "reduce/reporter.h"

namespace opverify {

class SummaryJsonReporter : public Reporter {
 public:
  Status ReportRun(const RunModel& run) override;
};

}  // namespace opverify
