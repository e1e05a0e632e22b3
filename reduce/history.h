// The nightly history (opverify-reduce --history FILE): one JSON line per
// operator and night, appended, never rewritten: its verdict, the versions
// the night ran with (the runner's build, the libraries under test), the
// date the run started, where benchmarked its geometric-mean latency, and
// where the operator ran whole its seconds on the ranks (the next night's
// plan reads them: HistorySeconds).
// From it the reports say how long an operator has been failing ("failing
// since 2026-11-30 (4 nights)") and split tonight's failures into still and
// newly failing, beside the newly passing; the latency trend (a sparkline)
// comes from the same lines.
//
// The file is shared by every night and every reducer: a night's lines are
// appended in one write under an exclusive flock(2), so concurrent reducers
// never interleave; a damaged line (a crash mid-write, an edit) is skipped
// with a warning naming the file and line, and what the file already holds
// is never rewritten.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reduce/run_model.h"
#include "runner/common/status.h"

namespace opverify {

// What a night ran with, from the run itself (a re-reduce keeps them).
struct NightVersions {
  std::string date;  // YYYY-MM-DD (UTC) the run started, see NightOf
  // The build that ran the run ({"version", "commit"}, summary.json's
  // "opverify"), not the reducer's; null when the run records none.
  nlohmann::json runner;
};

// The run's date: the earliest start its operators' environments record
// (converted to UTC), else run_info's "started_at", else `today`.
NightVersions NightOf(const RunModel& run, const std::string& today);

// One night of an operator in the history file (the latency trend).
struct HistoryPoint {
  std::string date;  // YYYY-MM-DD
  std::string commit;
  double geomean_latency_ms = 0;
};

// An operator failing tonight: since when, over how many nights in a row
// (tonight included; nights with no verdict for it are not counted and do
// not break the streak).
struct FailingStreak {
  std::string op;
  std::string since;  // the date of the streak's first night
  int nights = 1;
};

// Tonight's verdicts against the operator's previous night in the history.
struct VerdictTrend {
  std::string file;                          // the history file
  int nights = 0;                            // earlier nights (runs) of the run's operators in it
  std::vector<FailingStreak> still_failing;  // failed the night before too
  std::vector<FailingStreak> newly_failing;  // passed the night before, or no night before
  std::vector<std::string> newly_passing;    // failed the night before, pass tonight
  std::map<std::string, FailingStreak> failing;  // every failing operator, by name
  nlohmann::ordered_json ToJson() const;
};

// "failing since 2026-11-30 (4 nights)"; "" for an operator not failing.
std::string FailingSinceText(const VerdictTrend& trend, const std::string& op);

// The history read (and this run's lines appended) by UpdateHistory.
struct History {
  std::vector<nlohmann::json> rows;   // every readable line, in file order (tonight's last)
  std::vector<std::string> warnings;  // "FILE:LINE: skipped: ..." per damaged line
  int appended = 0;                   // this run's lines added (0: it was there already)
};

// Appends the run's lines (one per operator with a verdict: "passed",
// "failed" or "incomplete") unless the run is already in the file (same run
// folder and operator), and returns every line. `commit`: the "commit"
// field of its lines (the library under test, --history-commit; default the
// runner's). An error (the file cannot be opened, locked or written) names
// the file; damaged lines are warnings, never errors.
Result<History> UpdateHistory(const std::string& path, const RunModel& run,
                              const NightVersions& night, const std::string& commit);

// Each operator's seconds on its ranks in a run: the sum of its items' time
// (start-up, compile, cases, benchmark, A/B) in summary.json's "timeline";
// items of the wrong shape are passed over (the file is data); empty without
// a timeline.
std::map<std::string, double> TimelineOperatorSeconds(const nlohmann::json& timeline);

// What the history predicts of each operator's cost on the next night (the
// cost-aware plan's input where no --previous run is named): its latest
// line's "seconds", in file order; lines without them (an incomplete night,
// a history written before them) are passed over. The file is read under a
// shared lock; damaged lines are warnings (`warnings`), a missing file is an
// empty prediction, an unreadable one an error naming it.
Result<std::map<std::string, double>> HistorySeconds(const std::string& path,
                                                     std::vector<std::string>* warnings);

// Tonight's verdicts (the model's) against the history's earlier nights.
// A pure function; `rows` as UpdateHistory returns them.
VerdictTrend TrendOf(const std::vector<nlohmann::json>& rows, const RunModel& run,
                     const NightVersions& night, const std::string& file);

// The latency lines of the run's operators, by operator, oldest first (by
// date; lines of one date in file order). Only the lines of the device the
// operator was benchmarked on in `run` are kept (all of them when that is
// unknown), so that a trend never mixes two devices' latencies; lines
// without a positive latency are skipped.
std::map<std::string, std::vector<HistoryPoint>> LatencyHistory(
    const std::vector<nlohmann::json>& rows, const RunModel& run);

}  // namespace opverify
