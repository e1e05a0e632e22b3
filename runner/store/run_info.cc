#include "runner/store/run_info.h"

#include "runner/common/json_fields.h"

namespace opverify {
namespace {

using json_fields::FittingFieldReader;
using json_fields::ReadIfFits;
using json_fields::ReadIfObject;
using nlohmann::json;

template <typename Field, typename Timing>
void RunTimingFields(const Field& field, Timing& t) {
  field("run_wall_s", t.run_wall_s);
  field("store_s", t.store_s);
  field("ab_s", t.ab_s);
  field("bench_s", t.bench_s);
  field("item_s", t.item_s);
  field("stopped_s", t.stopped_s);
}

template <typename Field, typename Lost>
void LostItemFields(const Field& field, Lost& lost) {
  field("item", lost.item);
  field("operator", lost.op);
  field("cases", lost.cases);
}

template <typename Field, typename Left>
void RankLeftFields(const Field& field, Left& left) {
  field("rank", left.rank);
  field("reason", left.reason);
}

template <typename Field, typename Info>
void RunInfoFields(const Field& field, Info& info) {
  field("manifest", info.manifest);
  field("manifest_name", info.manifest_name);
  field("backend", info.backend);
  field("launcher", info.launcher);
  field("started_at", info.started_at);
  field("ranks", info.ranks);
  field("stopped_by_signal", info.stopped_by_signal);
  field("unassigned_items", info.unassigned_items);
}

}  // namespace

void from_json(const json& j, BuildStamp& b) {
  ReadIfFits(j, "version", b.version);
  ReadIfFits(j, "commit", b.commit);
}

void to_json(json& j, const LostItem& lost) { LostItemFields(json_fields::FieldWriter{j}, lost); }
void from_json(const json& j, LostItem& lost) { LostItemFields(FittingFieldReader{j}, lost); }

void to_json(json& j, const RankLeft& left) {
  RankLeftFields(json_fields::FieldWriter{j}, left);
  json_fields::FieldWriter{j}("lost_item", left.lost_item);  // null when it held none
}

void from_json(const json& j, RankLeft& left) {
  RankLeftFields(FittingFieldReader{j}, left);
  ReadIfObject(j, "lost_item", left.lost_item);
}

void from_json(const json& j, RunTiming& t) { RunTimingFields(FittingFieldReader{j}, t); }

// Each entry of "ranks_left" that is an object.
std::vector<RankLeft> RanksLeft(const json& j) {
  std::vector<RankLeft> left;
  if (!j.is_object() || !j.contains("ranks_left") || !j["ranks_left"].is_array()) return left;
  for (const json& entry : j["ranks_left"]) {
    if (entry.is_object()) left.push_back(entry.get<RankLeft>());
  }
  return left;
}

void from_json(const json& j, RunInfo& info) {
  info.ranks_left = RanksLeft(j);
  RunInfoFields(FittingFieldReader{j}, info);
  ReadIfObject(j, "timing", info.timing);
  ReadIfObject(j, "opverify", info.opverify);
  ReadIfObject(j, "reduced_with", info.reduced_with);
  if (j.is_object() && j.contains("stopped_by_maxfail") && j["stopped_by_maxfail"].is_object()) {
    info.stopped_by_maxfail = 0;
    ReadIfFits(j["stopped_by_maxfail"], "max_failures", *info.stopped_by_maxfail);
  }
  if (j.is_object() && j.contains("stopped_by_time_limit") &&
      j["stopped_by_time_limit"].is_object()) {
    info.stopped_by_time_limit = 0;
    ReadIfFits(j["stopped_by_time_limit"], "seconds", *info.stopped_by_time_limit);
  }
}

}  // namespace opverify
