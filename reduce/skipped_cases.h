// What a run did not run, from selection.json (written by opverify-batch:
// the selection and every operator of the run's part of the manifest) and
// the stored records: the cases the selection left out (with the flag that
// did it) and the cases never reached (the run was stopped). junit.xml
// reports them as <skipped>.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reduce/run_model.h"

namespace opverify {

// Why a case of a selected operator has no result: the stop signal, the
// --maxfail limit (both in `run_info`, the batch's record of itself), or neither.
std::string NotRunReason(const nlohmann::json& run_info);

// A case the run meant to run but did not reach (not one the selection left out).
bool IsNotRun(const SkippedCase& skipped);

// For a run stopped early (a signal, --time-limit, --maxfail, ranks that
// left): what the reports cover and what they do not (the work items never
// started, each operator whose cases were not all stored), one plain-text
// line each; empty for a run that was not stopped.
std::vector<std::string> StoppedEarlyLines(const RunModel& run);

// Fills run->skipped from `selection` (selection.json's content; null for a
// run without one, e.g. a --merge of parts, which then lists nothing).
void AddSkippedCases(const nlohmann::json& selection, RunModel* run);

}  // namespace opverify
