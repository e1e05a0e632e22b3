// What the readable reports (report.md, report.html) show beside the run
// model when opverify-reduce is given more than the run folder: the
// comparison with --baseline, the --references check and the --history
// trend. Computed after summary.json and perf_result.json are written (the
// baseline diff reads them) and before report.md and report.html are.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reduce/baseline_diff.h"
#include "reduce/history.h"
#include "reduce/references.h"

namespace opverify {

struct ReportExtras {
  std::optional<BaselineDiff> baseline;
  std::string baseline_dir;  // as given to --baseline
  std::optional<ReferenceCheck> references;
  // The manifest's tags by operator (ReadManifestTags), for the grid's
  // groups; empty when the manifest could not be read, and then
  // `tags_note` says why (the grid groups by family instead).
  std::map<std::string, std::vector<std::string>> tags;
  std::string tags_note;
  // By operator: its history's nights, oldest first (LatencyHistory), this run's included.
  std::map<std::string, std::vector<HistoryPoint>> history;
  // Tonight's verdicts against the --history file's earlier nights.
  std::optional<VerdictTrend> trend;
};

// The tags of every operator of the run's manifest (run_info's "manifest"),
// into extras->tags; where it cannot be read, extras->tags_note says why.
void ReadManifestTags(const nlohmann::json& run_info, ReportExtras* extras);

}  // namespace opverify
