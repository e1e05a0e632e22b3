#include "runner/results/operator_outcome.h"

#include <algorithm>

namespace opverify {

int OperatorOutcome::passed_cases() const {
  int passed = 0;
  for (const auto& c : cases) passed += c.passed ? 1 : 0;
  return passed;
}

int OperatorOutcome::waived_cases() const {
  int waived = 0;
  for (const auto& c : cases) waived += c.waived() ? 1 : 0;
  return waived;
}

bool OperatorOutcome::allowances_checked() const {
  if (!lint.is_null()) return true;
  return std::any_of(cases.begin(), cases.end(),
                     [](const CaseOutcome& c) { return !c.runtime_evidence.is_null(); });
}

}  // namespace opverify
