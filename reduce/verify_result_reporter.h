// Each operator's ops/<op>/verify_result.json, the seed's format
// (runner/results/verify_result.h), assembled from its stored cases.
#pragma once

#include "reduce/reporter.h"

namespace opverify {

class VerifyResultReporter : public Reporter {
 public:
  Status ReportRun(const RunModel& run) override;
};

}  // namespace opverify
