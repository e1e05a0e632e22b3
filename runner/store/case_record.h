// One record of the result store: a case an operator ran, or one of the
// facts stored beside its cases (RecordKind). ShardWriter (shard_writer.h)
// writes records; ReadRunRecords (run_records.h) reads them back.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/tensor/tensor_view.h"

namespace opverify {

// What a record is. Records that are not cases have case_index -1 and keep
// their content in `extra`.
enum class RecordKind {
  kCase,        // one case of an operator, judged
  kOperator,    // an item's operator-level facts: environment, lint, non_compute
  kBenchItem,   // an item's benchmark: settings, clock, environment, wall time
  kBenchShape,  // one benchmarked shape; extra["case_id"] names its case
};

// The on-disk form (schemas/hdf5-layout.md): the value of the key "kind" in
// a case group's `extra` attribute, which a case does not have.
// "case", "operator", "bench_item", "bench_shape".
std::string_view RecordKindName(RecordKind kind);
// The kind named `name`; nullopt for a name RecordKindName never gives.
std::optional<RecordKind> ParseRecordKind(std::string_view name);

// Everything the store keeps about one record.
struct CaseRecord {
  RecordKind kind = RecordKind::kCase;
  std::string case_id;
  std::string op_name;
  int case_index = 0;  // -1 for records that are not cases
  nlohmann::json params = nlohmann::json::object();
  nlohmann::json input_desc = nlohmann::json::array();
  bool passed = false;
  // Passed under declared exceptions (the verdict "waived"; extra.details.waivers
  // says which): a pass, counted apart. Never set on a failed record.
  bool waived = false;
  std::string route;       // of the first failing output, else of output 0
  std::string error_type;  // empty when passed
  std::string error_msg;
  // Per output: the judge's JSON (route, metrics, worst).
  nlohmann::json outputs = nlohmann::json::array();
  // Milliseconds; wall_ms, compile_ms, construct_ms, golden_ms, impl_ms and
  // judge_ms are also columns of the case table.
  nlohmann::json timings = nlohmann::json::object();
  int rank = 0;
  std::string device;
  // The A/B record of an accuracy failure; its "classification" is also a
  // column of the case table.
  nlohmann::json ab = nlohmann::json(nullptr);
  // Anything else (warnings, probe, golden device; a fact record's content).
  // Never the key "kind": `kind` is stored there.
  nlohmann::json extra = nlohmann::json::object();
  // Per output: golden and actual, kept by the policy (views valid during Append).
  std::vector<std::pair<TensorView, TensorView>> tensors;
  // Set by ReadRunRecords (ignored by Append): where the record is, as a
  // tensor spec prefix relative to the run folder, e.g.
  // "shards/rank-0000.1.h5:/cases/000003" (+ "/outputs/0/golden").
  std::string stored_at;
};

}  // namespace opverify
