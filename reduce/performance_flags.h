// opverify-reduce's performance references and history at the command
// line: --references FILE (a PerformanceError, exit 1, for a measured
// latency outside its bounds; reference_check.json in the run folder) and
// --history FILE (one line per benchmarked operator appended).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "reduce/report_extras.h"
#include "reduce/run_model.h"

namespace opverify {

struct PerformanceFlags {
  std::string references;      // --references FILE
  std::string history;         // --history FILE
  std::string history_commit;  // --history-commit; default: the commit that built the run
};

void AddPerformanceFlags(CLI::App& app, PerformanceFlags* flags);

// Checks the references and appends the history as `flags` ask, printing
// each PerformanceError. Returns 0, 1 (a bound violated) or 2 (a file that
// cannot be read, parsed or written). `extras`, where given, receives the
// check and the history of the run's operators (this run's line included)
// for the reports.
int CheckPerformance(const PerformanceFlags& flags, const RunModel& run,
                     ReportExtras* extras = nullptr);

}  // namespace opverify
