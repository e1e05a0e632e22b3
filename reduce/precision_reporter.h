// Each operator's ops/<op>/precision_report.md: seed 003's report
// (configuration, precision standards, results, MERE and MARE per case,
// criteria), plus the route and standard that decided each case.
#pragma once

#include "reduce/reporter.h"

namespace opverify {

class PrecisionReporter : public Reporter {
 public:
  Status ReportRun(const RunModel& run) override;
};

}  // namespace opverify
