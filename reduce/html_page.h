// The parts of report.html (reduce/html_reporter.cc puts them together):
// the first screen (totals, failures by error type and A/B class, the
// baseline diff, the environment) and the operator grid below it (grouped,
// collapsible, filtered by a small inline script). Each appends escaped
// markup to `html`; nothing here reads a file.
#pragma once

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "reduce/report_extras.h"
#include "reduce/run_model.h"

namespace opverify::html {

std::string Fixed(double value, int decimals);
std::string SpeedupText(const std::optional<double>& value);
// A latency in milliseconds with 3 significant digits ("0.0123").
std::string Milliseconds(double ms);
// The id of the operator's row in the grid ("op-" and its folder's name).
std::string OperatorAnchor(const std::string& name);
// The relative link to one of the operator's files in the run folder
// ("ops/<folder>/verify_result.json"), percent-encoded.
std::string OperatorFileLink(const std::string& name, const std::string& file);
// The group an operator is listed under in the grid: its first manifest
// tag when the manifest's tags are known, else its family (the name's
// first word: "softmax_backward" -> "softmax", "19_ReLU" -> "ReLU").
std::string OperatorGroup(const std::string& name, const ReportExtras& extras);
// A sparkline (inline SVG, no script) of an operator's geometric-mean
// latency over its history's last nights; "" for fewer than two.
std::string Sparkline(const std::vector<HistoryPoint>& history);

void FirstScreen(std::ostringstream& html, const RunModel& run, const ReportExtras& extras);
void OperatorGrid(std::ostringstream& html, const RunModel& run, const ReportExtras& extras);
// Each rank's work items over the run (run_info's "timeline"); nothing without one.
void Timeline(std::ostringstream& html, const RunModel& run);

}  // namespace opverify::html
