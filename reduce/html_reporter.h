// report.html: one self-contained page (no script, no network: charts are
// inline SVG) with the pass/fail grid of operators x dtypes, the speedup
// distribution, the slowest and least precise operators and every failure
// with a command that runs its operator again. Every string from a run (an
// operator's name, an error message) is escaped.
#pragma once

#include "reduce/reporter.h"

namespace opverify {

class HtmlReporter : public Reporter {
 public:
  Status ReportRun(const RunModel& run) override;
};

}  // namespace opverify
