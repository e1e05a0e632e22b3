// The morning after a night: the run's failures by operator, one line each,
// in the run model's operator order: how many of its cases failed, its most
// common error type with the A/B class of its first failure, that failure's
// message and a command that runs that case again by itself. The console
// (opverify-batch, opverify-reduce), report.md and report.html show it
// before their per-case lists.
#pragma once

#include <string>
#include <vector>

#include "reduce/run_model.h"

namespace opverify {

struct OperatorTriage {
  std::string op;
  int failed = 0;
  int cases = 0;           // stored
  std::string error_type;  // the most common of its failures (ties: the first by name)
  std::string ab;          // the first failure's A/B class; empty without one
  std::string first_case_id;
  std::string first_message;
  // `opverify verify ... --case N --output DIR/` for an operator with its own
  // cases (DIR a new folder, never the operator's), else its operator's repro.
  std::string repro;
};

std::vector<OperatorTriage> TriageByOperator(const RunModel& run);

// "rope_0037  5/5  AccuracyError (real_defect)  first: <message>", terminal-safe, one line;
// `since` ("failing since 2026-11-30 (4 nights)", --history) before "first:" where given.
std::string TriageLine(const OperatorTriage& triage, const std::string& since = "");

}  // namespace opverify
