// Each benchmarked operator's ops/<op>/perf_result.json, the seed's format
// (runner/results/perf_result.h), rebuilt from its stored shapes. Only an
// operator whose every case passed has one (RunModel's `performance`).
#pragma once

#include "reduce/reporter.h"

namespace opverify {

class PerfResultReporter : public Reporter {
 public:
  Status ReportRun(const RunModel& run) override;
};

}  // namespace opverify
