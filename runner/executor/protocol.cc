#include "runner/executor/protocol.h"

#include "runner/common/json_fields.h"

namespace opverify::executor_protocol {

using json_fields::FieldReader;
using json_fields::FieldWriter;
using json_fields::Read;
using nlohmann::json;

namespace {

// A number, when the field holds one (the executor may send null or text).
void ReadNumber(const json& j, const char* key, std::optional<double>& field) {
  if (j.is_object() && j.contains(key) && j[key].is_number()) field = j[key].get<double>();
}

template <typename Request>
json Message() {
  return {{"op", std::string(Request::kOp)}};
}

// A message's fields are listed once (runner/common/json_fields.h).

template <typename Field, typename Load>
void LoadFields(const Field& field, Load& r) {
  field("task_file", r.task_file);
  field("impl_file", r.impl_file);
  field("backend", r.backend);
  field("seed", r.seed);
  field("golden_precision", r.golden_precision);
  field("params", r.params, r.params.empty());
  field("edge_cases", r.edge_cases);
  field("runtime_checks", r.runtime_checks);
  field("ghost_replay", r.ghost_replay);
  field("library", r.library);
  field("python_path", r.python_path);
  field("override", r.override_spec, r.override_spec.is_null());
  field("reference_as_impl", r.reference_as_impl, !r.reference_as_impl);
  field("allow_torch", r.allow_torch, r.allow_torch.empty());
  field("role", r.role);
}

template <typename Field, typename RunCase>
void RunCaseFields(const Field& field, RunCase& r) {
  field("index", r.index);
  field("seed", r.seed);
  field("probe", r.probe);
  field("check_determinism", r.check_determinism);
  field("evidence", r.evidence);
  field("golden_sizes", r.golden_sizes, r.golden_sizes.empty());
  field("reference_writes", r.reference_writes, r.reference_writes.empty());
}

template <typename Field, typename Lint>
void LintFields(const Field& field, Lint& r) {
  field("file", r.file);
  field("non_compute", r.non_compute);
  field("library", r.library);
  field("python_path", r.python_path);
  field("entries", r.entries, r.entries.empty());
  field("overrides", r.overrides, r.overrides.empty());
  field("allow_torch", r.allow_torch, r.allow_torch.empty());
}

template <typename Field, typename BenchPrepare>
void BenchPrepareFields(const Field& field, BenchPrepare& r) {
  field("index", r.index);
  field("seed", r.seed);
  field("warmup", r.warmup);
  field("flush_l2", r.flush_l2);
  field("skip_framework", r.skip_framework);
}

template <typename Field, typename BenchMeasure>
void BenchMeasureFields(const Field& field, BenchMeasure& r) {
  field("side", r.side);
  field("repeats", r.timing.repeats);
  field("adaptive", r.timing.adaptive);
  field("max_repeats", r.timing.max_repeats, r.timing.max_repeats <= 0);
  field("rse_target", r.timing.rse_target);
  field("max_seconds", r.timing.max_seconds);
  field("profile_iterations", r.timing.profile_iterations);
}

// An error's fields travel only in a failed reply.
template <typename Field, typename Status>
void ReplyStatusFields(const Field& field, Status& r) {
  field("ok", r.ok);
  field("error_type", r.error_type, r.ok);
  field("error_msg", r.error_msg, r.ok);
  field("device_poisoned", r.device_poisoned, r.ok);
}

}  // namespace

std::string RequestOp(const json& request) {
  return request.is_object() && request.contains("op") && request["op"].is_string()
             ? request["op"].get<std::string>()
             : std::string();
}

void to_json(json& j, const LoadRequest& r) {
  j = Message<LoadRequest>();
  LoadFields(FieldWriter{j}, r);
}
void from_json(const json& j, LoadRequest& r) { LoadFields(FieldReader{j}, r); }

void to_json(json& j, const DescribeCasesRequest&) { j = Message<DescribeCasesRequest>(); }
void from_json(const json&, DescribeCasesRequest&) {}

void to_json(json& j, const RunCaseRequest& r) {
  j = Message<RunCaseRequest>();
  RunCaseFields(FieldWriter{j}, r);
}
void from_json(const json& j, RunCaseRequest& r) { RunCaseFields(FieldReader{j}, r); }

void to_json(json& j, const EnvironmentRequest&) { j = Message<EnvironmentRequest>(); }
void from_json(const json&, EnvironmentRequest&) {}

void to_json(json& j, const LintRequest& r) {
  j = Message<LintRequest>();
  LintFields(FieldWriter{j}, r);
}
void from_json(const json& j, LintRequest& r) { LintFields(FieldReader{j}, r); }

void to_json(json& j, const BenchPrepareRequest& r) {
  j = Message<BenchPrepareRequest>();
  BenchPrepareFields(FieldWriter{j}, r);
}
void from_json(const json& j, BenchPrepareRequest& r) { BenchPrepareFields(FieldReader{j}, r); }

void to_json(json& j, const BenchMeasureRequest& r) {
  j = Message<BenchMeasureRequest>();
  BenchMeasureFields(FieldWriter{j}, r);
}
void from_json(const json& j, BenchMeasureRequest& r) { BenchMeasureFields(FieldReader{j}, r); }

void to_json(json& j, const BenchReleaseRequest&) { j = Message<BenchReleaseRequest>(); }
void from_json(const json&, BenchReleaseRequest&) {}

void to_json(json& j, const BenchTransferRequest& r) {
  j = Message<BenchTransferRequest>();
  j["nbytes"] = r.nbytes;
}

void from_json(const json& j, BenchTransferRequest& r) { Read(j, "nbytes", r.nbytes); }

void to_json(json& j, const PingRequest&) { j = Message<PingRequest>(); }
void from_json(const json&, PingRequest&) {}

void to_json(json& j, const ReplyStatus& r) {
  j = json::object();
  ReplyStatusFields(FieldWriter{j}, r);
}
void from_json(const json& j, ReplyStatus& r) { ReplyStatusFields(FieldReader{j}, r); }

void to_json(json& j, const TensorDescription& r) {
  j = {{"dtype", r.dtype}, {"shape", r.shape}, {"offset", r.offset}, {"nbytes", r.nbytes}};
}

void from_json(const json& j, TensorDescription& r) {
  r.dtype = j.at("dtype").get<std::string>();
  r.shape = j.at("shape").get<std::vector<std::int64_t>>();
  r.offset = j.at("offset").get<std::int64_t>();
  r.nbytes = j.at("nbytes").get<std::int64_t>();
}

void to_json(json& j, const LoadReply& r) {
  json edges = json::array();
  for (const auto& edge : r.edge_cases)
    edges.push_back({{"label", edge.label}, {"params", edge.params}});
  j = {{"case_count", r.case_count},
       {"backend", r.backend},
       {"edge_cases", edges},
       {"non_compute", r.non_compute}};
}

void from_json(const json& j, LoadReply& r) {
  Read(j, "case_count", r.case_count);
  Read(j, "backend", r.backend);
  if (j.is_object() && j.contains("edge_cases") && j["edge_cases"].is_array()) {
    for (const auto& edge : j["edge_cases"]) {
      r.edge_cases.push_back({edge.value("label", ""), edge.value("params", json::object())});
    }
  }
  Read(j, "non_compute", r.non_compute);
}

void to_json(json& j, const DescribeCasesReply& r) { j = {{"input_descs", r.input_descs}}; }

void from_json(const json& j, DescribeCasesReply& r) {
  Read(j, "input_descs", r.input_descs);
  if (!r.input_descs.is_array()) r.input_descs = json::array();
}

void to_json(json& j, const RunCaseReply& r) {
  j = json::object();
  if (r.not_applicable) j["not_applicable"] = *r.not_applicable;
  if (!r.input_desc.is_null()) j["input_desc"] = r.input_desc;
  j["input_dtypes"] = r.input_dtypes;
  j["input_digest"] = r.input_digest;
  j["warnings"] = r.warnings;
  j["golden_device"] = r.golden_device;
  j["golden_precision"] = r.golden_precision;
  j["fallback_reason"] = r.fallback_reason ? json(*r.fallback_reason) : json(nullptr);
  if (!r.probe.is_null()) j["probe"] = r.probe;
  if (!r.runtime_evidence.is_null()) j["runtime_evidence"] = r.runtime_evidence;
  if (!r.timings.is_null()) j["timings"] = r.timings;
  if (r.regression_type) j["regression_type"] = *r.regression_type;
  if (!r.waivers.is_null()) j["waivers"] = r.waivers;
  if (!r.golden_sizes.empty()) j["golden_sizes"] = r.golden_sizes;
  if (!r.writes_inputs.empty()) j["writes_inputs"] = r.writes_inputs;
}

void from_json(const json& j, RunCaseReply& r) {
  if (!j.is_object()) return;
  Read(j, "not_applicable", r.not_applicable);
  Read(j, "input_desc", r.input_desc);
  Read(j, "input_dtypes", r.input_dtypes);
  Read(j, "input_digest", r.input_digest);
  Read(j, "warnings", r.warnings);
  Read(j, "golden_device", r.golden_device);
  Read(j, "golden_precision", r.golden_precision);
  if (j.contains("fallback_reason") && j["fallback_reason"].is_string())
    r.fallback_reason = j["fallback_reason"];
  Read(j, "probe", r.probe);
  Read(j, "runtime_evidence", r.runtime_evidence);
  Read(j, "timings", r.timings);
  if (j.contains("regression_type") && j["regression_type"].is_number_integer()) {
    r.regression_type = j["regression_type"].get<int>();
  }
  Read(j, "waivers", r.waivers);
  Read(j, "golden_sizes", r.golden_sizes);
  Read(j, "writes_inputs", r.writes_inputs);
}

void to_json(json& j, const EnvironmentReply& r) { j = {{"environment", r.environment}}; }
void from_json(const json& j, EnvironmentReply& r) { Read(j, "environment", r.environment); }

void to_json(json& j, const LintReply& r) { j = {{"lint", r.lint}}; }
void from_json(const json& j, LintReply& r) { Read(j, "lint", r.lint); }

void to_json(json& j, const BenchPrepareReply& r) {
  j = {{"input_desc", r.input_desc}, {"input_dtypes", r.input_dtypes}};
  if (r.bytes_moved) j["bytes_moved"] = *r.bytes_moved;
  j["memory_bandwidth_gbs"] =
      r.memory_bandwidth_gbs ? json(*r.memory_bandwidth_gbs) : json(nullptr);
}

void from_json(const json& j, BenchPrepareReply& r) {
  Read(j, "input_desc", r.input_desc);
  Read(j, "input_dtypes", r.input_dtypes);
  ReadNumber(j, "bytes_moved", r.bytes_moved);
  ReadNumber(j, "memory_bandwidth_gbs", r.memory_bandwidth_gbs);
}

void to_json(json& j, const BenchMeasureReply& r) {
  j = {{"side", r.side},
       {"stats", r.stats},
       {"peak_memory_mb", r.peak_memory_mb ? json(*r.peak_memory_mb) : json(nullptr)},
       {"added_memory_mb", r.added_memory_mb ? json(*r.added_memory_mb) : json(nullptr)},
       {"warnings", r.warnings}};
  if (!r.operators.is_null()) j["operators"] = r.operators;
}

void from_json(const json& j, BenchMeasureReply& r) {
  Read(j, "side", r.side);
  Read(j, "stats", r.stats);
  ReadNumber(j, "peak_memory_mb", r.peak_memory_mb);
  ReadNumber(j, "added_memory_mb", r.added_memory_mb);
  Read(j, "operators", r.operators);
  Read(j, "warnings", r.warnings);
}

void to_json(json& j, const PingReply& r) { j = {{"pid", r.pid}}; }
void from_json(const json& j, PingReply& r) { Read(j, "pid", r.pid); }

}  // namespace opverify::executor_protocol
