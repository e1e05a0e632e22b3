// report.html: one self-contained page (no network; inline style, one
// inline script for the filter, inline SVG charts) for runs of thousands of
// operators: the first screen (html_page.h: totals, failures by error type
// and A/B class, the baseline diff, the environment), the operator grid,
// the speedup distribution, the slowest and least precise operators and
// every failure with a command that runs its operator again. Every string
// from a run (an operator's name, an error message) is escaped.
#pragma once

#include "reduce/reporter.h"

namespace opverify {

class HtmlReporter : public Reporter {
 public:
  Status ReportRun(const RunModel& run) override;
};

}  // namespace opverify
