// junit.xml: the layout Jenkins and GitLab read (schemas/junit.xsd). One
// testsuite per operator with its repro command as a property, one testcase
// per case; a failed case has a <failure> with its error type and message,
// and its A/B attempts (each attempt's verdict and the outputs' digests) in
// <system-out>.
#pragma once

#include "reduce/reporter.h"

namespace opverify {

class JUnitReporter : public Reporter {
 public:
  Status ReportRun(const RunModel& run) override;
};

}  // namespace opverify
