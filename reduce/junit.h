// junit.xml: the layout Jenkins and GitLab read (schemas/junit.xsd). One
// testsuite per operator, one testcase per case; a failed case has a
// <failure> with its error type and message, and its A/B attempts (each
// attempt's verdict and the outputs' digests) in <system-out>.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runner/common/status.h"
#include "runner/store/case_record.h"

namespace opverify {

struct JUnitInput {
  std::string run_name;  // the <testsuites> name (the manifest's)
  // Per operator, its cases (case_index >= 0), in case order.
  std::map<std::string, std::vector<const CaseRecord*>> operators;
  std::map<std::string, std::string> repro;  // per operator: a command that runs it again
};

Status WriteJUnit(const std::string& path, const JUnitInput& input);

}  // namespace opverify
