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

void from_json(const json& j, RunTiming& t) { RunTimingFields(FittingFieldReader{j}, t); }

void from_json(const json& j, RunInfo& info) {
  RunInfoFields(FittingFieldReader{j}, info);
  ReadIfObject(j, "timing", info.timing);
  ReadIfObject(j, "opverify", info.opverify);
  ReadIfObject(j, "reduced_with", info.reduced_with);
  if (j.is_object() && j.contains("stopped_by_maxfail") && j["stopped_by_maxfail"].is_object()) {
    info.stopped_by_maxfail = 0;
    ReadIfFits(j["stopped_by_maxfail"], "max_failures", *info.stopped_by_maxfail);
  }
}

}  // namespace opverify
