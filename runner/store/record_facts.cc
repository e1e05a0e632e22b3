#include "runner/store/record_facts.h"

#include <algorithm>

#include "runner/common/json_fields.h"
#include "runner/judge/json_number.h"

namespace opverify {
namespace {

using json_fields::FieldWriter;
using json_fields::ReadIfObject;
// A record's field, read where it has its type: absent, null or of another
// type (a tampered shard's; record_fields.h checks only what the reports rely
// on) it keeps its default, as the reports' lookups always did.
using Reader = json_fields::FittingFieldReader;
using json_fields::ReadIfFits;
using nlohmann::json;

template <typename Field, typename Judgement>
void TrustJudgementFields(const Field& field, Judgement& t) {
  field("ran", t.ran);
  field("judged", t.judged);
  field("why", t.why);
  field("error_type", t.error_type);
  field("error_msg", t.error_msg);
  field("passed", t.passed);
}

template <typename Field, typename Timings>
void CaseTimingsFields(const Field& field, Timings& t) {
  field("wall_ms", t.wall_ms);
  field("construct_ms", t.construct_ms);
  field("probe_ms", t.probe_ms);
  field("compile_ms", t.compile_ms);
  field("golden_ms", t.golden_ms);
  field("impl_ms", t.impl_ms);
  field("judge_ms", t.judge_ms);
  field("checks_ms", t.checks_ms);
  field("kernels_compiled", t.kernels_compiled);
  field("compile_cached_ms", t.compile_cached_ms);
  field("kernels_cached", t.kernels_cached);
}

template <typename Field, typename Verdict>
void OutputVerdictFields(const Field& field, Verdict& v) {
  field("passed", v.passed);
  field("dtype", v.dtype);
  field("route", v.route);
  field("standard", v.standard);
  field("error_type", v.error_type);
}

template <typename Field, typename Facts>
void OperatorFactsFields(const Field& field, Facts& f) {
  field("environment", f.environment);
  field("lint", f.lint);
  field("non_compute", f.non_compute);
  field("non_compute_given", f.non_compute_given, !f.non_compute_given);
  field("case_count", f.case_count, !f.case_count);
  field("impl_name", f.impl_name, !f.impl_name);
  field("task_file", f.task_file);
  field("lint_enabled", f.lint_enabled);
  field("allow_torch", f.allow_torch);
  field("allow_torch_checked", f.allow_torch_checked);
  field("startup", f.startup);
  field("left_out", f.left_out, f.left_out.empty());
}

}  // namespace

void from_json(const json& j, TrustJudgement& t) { TrustJudgementFields(Reader{j}, t); }

void from_json(const json& j, ReferenceTrust& t) {
  ReadIfFits(j, "reason", t.reason);
  ReadIfObject(j, "fp64", t.fp64);
  ReadIfObject(j, "device_reference", t.device_reference);
  t.stored = j;
}

void from_json(const json& j, AbRecord& ab) {
  ReadIfFits(j, "classification", ab.classification);
  ReadIfFits(j, "inherited_from", ab.inherited_from);
  ReadIfFits(j, "bitwise_equal", ab.bitwise_equal);
  ReadIfFits(j, "attempts", ab.attempts);
  ReadIfObject(j, "reference_trust", ab.reference_trust);
}

json AbRecord::ClassificationJson() const {
  return classification ? json(*classification) : json(nullptr);
}

void from_json(const json& j, CaseTimings& t) { CaseTimingsFields(Reader{j}, t); }

void from_json(const json& j, JudgeNumber& n) {
  n.value = JsonNumberValue(j);
  n.is_number = j.is_number();
}

void from_json(const json& j, EcoFigures& f) {
  ReadIfFits(j, "matched_ratio", f.matched_ratio);
  ReadIfFits(j, "over_count", f.over_count);
}

void from_json(const json& j, NpuFigures& f) {
  ReadIfFits(j, "MERE", f.mere);
  ReadIfFits(j, "rel_threshold", f.rel_threshold);
  ReadIfFits(j, "matched_ratio", f.matched_ratio);
  ReadIfFits(j, "max_error_cap_violation_count", f.max_error_cap_violation_count);
}

void from_json(const json& j, MereMareFigures& f) {
  ReadIfFits(j, "MERE", f.mere);
  ReadIfFits(j, "MARE", f.mare);
  ReadIfFits(j, "threshold", f.threshold);
  if (j.contains("passed") && j["passed"].is_boolean()) f.passed = j["passed"].get<bool>();
}

void from_json(const json& j, OutputFigures& f) {
  if (j.contains("max_rel_diff") && j["max_rel_diff"].is_number())
    f.max_rel_diff = j["max_rel_diff"].get<double>();
  ReadIfFits(j, "max_abs_diff", f.max_abs_diff);
  ReadIfObject(j, "eco", f.eco);
  ReadIfObject(j, "npu_benchmark", f.npu_benchmark);
  ReadIfObject(j, "mere_mare", f.mere_mare);
}

void from_json(const json& j, OutputVerdict& v) {
  OutputVerdictFields(Reader{j}, v);
  // The dimensions, where they are integers.
  const auto shape = j.find("shape");
  if (shape != j.end() && shape->is_array() &&
      std::all_of(shape->begin(), shape->end(),
                  [](const json& d) { return d.is_number_integer(); }))
    v.shape = shape->get<std::vector<std::int64_t>>();
  ReadIfObject(j, "metrics", v.metrics);
}

void to_json(json& j, const OperatorFacts& f) {
  j = json::object();
  OperatorFactsFields(FieldWriter{j}, f);
}

void from_json(const json& j, OperatorFacts& f) { OperatorFactsFields(Reader{j}, f); }

CaseContent ReadCaseContent(const CaseRecord& record) {
  CaseContent content;
  content.error_type = FailureType::FromText(record.error_type);
  content.timings = record.timings.get<CaseTimings>();
  if (record.ab.is_object()) content.ab = record.ab.get<AbRecord>();
  if (record.outputs.is_array()) {
    for (const json& output : record.outputs) {
      content.outputs.push_back(output.is_object() ? output.get<OutputVerdict>() : OutputVerdict{});
    }
  }
  const auto details = record.extra.is_object() ? record.extra.find("details") : record.extra.end();
  if (details != record.extra.end() && details->is_object())
    ReadIfFits(*details, "waivers", content.waivers);
  return content;
}

}  // namespace opverify
