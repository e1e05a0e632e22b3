#include "reduce/operator_triage.h"

#include <map>

#include "runner/common/shell_quote.h"
#include "runner/common/terminal_text.h"

namespace opverify {
namespace {

// The case again, alone, its results written into a folder of its own.
std::string CaseRepro(const OperatorModel& op, const CaseRecord& first) {
  if (op.repro.rfind("opverify verify ", 0) != 0 || first.case_index < 0) return op.repro;
  return op.repro + " " +
         ShellCommand({"--case", std::to_string(first.case_index + 1), "--output",
                       "/tmp/repro-" + OperatorFolder(op.name) + "/"});
}

}  // namespace

std::vector<OperatorTriage> TriageByOperator(const RunModel& run) {
  std::map<std::string, const FailureRow*> failure_of;  // case id -> its row
  for (const FailureRow& f : run.failures) failure_of[f.case_id] = &f;
  std::vector<OperatorTriage> out;
  for (const OperatorModel& op : run.operators) {
    if (op.failed == 0) continue;
    OperatorTriage triage;
    triage.op = op.name;
    triage.failed = op.failed;
    triage.cases = op.passed + op.waived + op.failed;
    int most = 0;
    for (const auto& [type, count] : op.error_types) {
      if (count > most) most = count, triage.error_type = type;
    }
    for (const CaseRecord& c : op.cases) {  // by case index: the first that failed
      if (c.passed) continue;
      triage.first_case_id = c.case_id;
      triage.first_message = c.error_msg;
      if (const auto row = failure_of.find(c.case_id); row != failure_of.end())
        triage.ab = row->second->AbClass().value_or("");
      triage.repro = CaseRepro(op, c);
      break;
    }
    out.push_back(std::move(triage));
  }
  return out;
}

std::string TriageLine(const OperatorTriage& t, const std::string& since) {
  return TerminalLine(t.op, 80) + "  " + std::to_string(t.failed) + "/" + std::to_string(t.cases) +
         "  " + TerminalLine(t.error_type, 60) +
         (t.ab.empty() ? "" : " (" + TerminalLine(t.ab, 40) + ")") +
         (since.empty() ? "" : "  " + TerminalLine(since, 60)) +
         "  first: " + TerminalLine(t.first_message, 160);
}

}  // namespace opverify
