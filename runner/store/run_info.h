// What a run recorded of itself (summary.json's top level, written by
// opverify-batch's rank 0, runner/batch/batch_reports.cc), as far as the
// reports and opverify-reduce read it. The JSON itself is copied into the
// next summary as given; this type is its fields, read once. A field absent,
// null or of another type keeps its default.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace opverify {

// The build that wrote or reduced a run: summary.json's "opverify" and "reduced_with".
struct BuildStamp {
  std::optional<std::string> version;
  std::optional<std::string> commit;
};

// summary.json's "timing", in seconds.
struct RunTiming {
  std::optional<double> run_wall_s;  // the run's wall time
  double store_s = 0, ab_s = 0, bench_s = 0;
  std::optional<double> item_s;  // the work items' summed time
  double stopped_s = 0;  // within item_s: cases the run's stop cut short (run, not stored)
};

// The work item a rank held when it left: lost (its cases may be in its shard).
struct LostItem {
  int item = -1;
  std::string op;          // "operator"
  std::vector<int> cases;  // the item's case indices; empty: the whole operator
};

// A worker rank that left the run before it was told to stop (summary.json's
// "ranks_left", written by runner/batch/rank_role.cc): why, and the work item
// it held, when it held one (null in the JSON otherwise).
struct RankLeft {
  int rank = -1;
  std::string reason;
  std::optional<LostItem> lost_item;
};

struct RunInfo {
  std::optional<std::string> manifest;  // the manifest's absolute path
  std::optional<std::string> manifest_name;
  std::optional<std::string> backend;
  std::optional<std::string> launcher;
  std::optional<std::string> started_at;
  std::optional<int> ranks;
  std::optional<RunTiming> timing;  // when an object
  // How the run stopped early: the signal's name, --maxfail's count, or
  // --time-limit's seconds; and the work items it never started.
  std::optional<std::string> stopped_by_signal;
  std::optional<int> stopped_by_maxfail;        // max_failures, when an object
  std::optional<double> stopped_by_time_limit;  // seconds, when an object
  int unassigned_items = 0;
  std::vector<RankLeft> ranks_left;
  std::optional<BuildStamp> opverify;      // when an object
  std::optional<BuildStamp> reduced_with;  // when an object
};

void from_json(const nlohmann::json& j, BuildStamp& b);
void from_json(const nlohmann::json& j, RunTiming& t);
void from_json(const nlohmann::json& j, RunInfo& info);
void to_json(nlohmann::json& j, const LostItem& lost);
void from_json(const nlohmann::json& j, LostItem& lost);
void to_json(nlohmann::json& j, const RankLeft& left);
void from_json(const nlohmann::json& j, RankLeft& left);

}  // namespace opverify
