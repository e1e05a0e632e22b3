// The reports of a run folder, rebuilt from its HDF5 shards alone: the run
// model is built once (reduce/run_model.h) and each format's reporter
// (reduce/reporter.h) writes from it: summary.json, report.md, report.html,
// junit.xml, and each operator's verify_result.json, perf_result.json and
// precision_report.md.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "reduce/report_extras.h"
#include "reduce/run_model.h"
#include "runner/common/status.h"

namespace opverify {

// Reads every stored record of `run_dir` and writes every report there.
// `run_info`: what the batch recorded of itself (manifest, ranks, timing),
// copied into summary.json. Journaled cases the store could not read are
// left out and listed in the summary's `problems`; what the run's plan.json
// promised and the store lacks, in its `incomplete` (RunTotals::lost counts
// both: the callers' exit codes never pass a run with lost results). Every reporter runs even
// when another could not write; the error then names each file that failed.
// `model`: where given, the run model the reports were written from.
// `extras`: where given, called once summary.json, junit.xml and every
// operator's files are written and before report.md and report.html are,
// to compare with a baseline (which reads those files), check references
// and read the history; what it fills in, those two show.
using ExtrasStep = std::function<void(const RunModel&, ReportExtras*)>;
Result<RunTotals> WriteRunReports(const std::string& run_dir, const nlohmann::json& run_info,
                                  RunModel* model = nullptr, const ExtrasStep& extras = nullptr);

// WriteRunReports once the model is built (from the store, or in a test
// from records made in memory): every reporter, the extras step between the
// data files and the readable reports.
Result<RunTotals> WriteModelReports(RunModel run, const std::string& run_dir,
                                    RunModel* model = nullptr, const ExtrasStep& extras = nullptr);

// The run's failed cases for the console, as report.md lists them: one
// "FAILED id  ErrorType  message" line each (FailureListLines), at most
// kFailureListCap, then the count of the rest.
void PrintFailedCases(const RunModel& run, const std::string& run_dir, std::FILE* out = stdout);

// "NOT RUN <case id>  <reason>" per case the run meant to run and did not
// reach (a stop signal, --maxfail), at most kFailureListCap, then a count.
void PrintNotRunCases(const RunModel& run, std::FILE* out = stdout);

// "failing operators (N):", then one TriageLine per failing operator (at
// most kFailureListCap, then a count): the morning's first read. With a
// --history trend, each line says since when it fails, and a last line
// counts the still failing, the newly failing and the newly passing.
void PrintOperatorTriage(const RunModel& run, std::FILE* out = stdout,
                         const VerdictTrend* trend = nullptr);

// The console's totals: "3 operators, 12 cases: 9 passed, 2 waived, 1 failed"
// ("waived" only when some case was); passed green and failed red when `colour`.
std::string TotalsLine(const RunTotals& totals, bool colour = false);

// "WAIVED <case id>  <allowance> (<why>)" per waived case (at most
// kFailureListCap, then a count) and a warning per stale allowance, on `out`:
// declared exceptions stay visible on the console too.
void PrintDeclaredExceptions(const RunModel& run, std::FILE* out = stdout);

}  // namespace opverify
