#include "runner/scheduler/rank_reports.h"

#include "runner/common/json_fields.h"

namespace opverify {
namespace {

using json_fields::FieldReader;
using json_fields::FieldWriter;
using nlohmann::json;

template <typename Field, typename Summary>
void CaseSummaryFields(const Field& field, Summary& s) {
  field("case_id", s.case_id);
  field("op", s.op);
  field("index", s.index);
  field("passed", s.passed);
  field("waived", s.waived);
  field("error_type", s.error_type);
  field("message", s.message);
  field("dtype", s.dtype);
  field("wall_ms", s.wall_ms);
  field("store_ms", s.store_ms);
  field("ab_ms", s.ab_ms);
  field("ab", s.ab);
  field("ab_inherited_from", s.ab_inherited_from);
}

template <typename Field, typename Summary>
void ItemSummaryFields(const Field& field, Summary& s) {
  field("item_ms", s.item_ms);
  field("startup_ms", s.startup_ms);
  field("compile_ms", s.compile_ms);
  field("cases_ms", s.cases_ms);
  field("ab_ms", s.ab_ms);
  field("store_ms", s.store_ms);
  field("bench_ms", s.bench_ms);
  field("stopped_ms", s.stopped_ms);
  field("cases", s.cases);
}

template <typename Field, typename Summary>
void BenchSummaryFields(const Field& field, Summary& s) {
  field("op", s.op);
  field("shapes", s.shapes);
  field("bench_ms", s.bench_ms);
}

}  // namespace

RankReportKind RankReportKindOf(const json& report) {
  const auto kind = report.is_object() ? report.find("kind") : report.end();
  if (kind == report.end()) return RankReportKind::kCase;
  if (*kind == "item") return RankReportKind::kItem;
  if (*kind == "bench") return RankReportKind::kBench;
  return RankReportKind::kUnknown;
}

void to_json(json& j, const CaseSummary& s) {
  j = json::object();
  CaseSummaryFields(FieldWriter{j}, s);
}
void from_json(const json& j, CaseSummary& s) { CaseSummaryFields(FieldReader{j}, s); }

void to_json(json& j, const ItemSummary& s) {
  j = {{"kind", "item"}};
  ItemSummaryFields(FieldWriter{j}, s);
}
void from_json(const json& j, ItemSummary& s) { ItemSummaryFields(FieldReader{j}, s); }

void to_json(json& j, const BenchSummary& s) {
  j = {{"kind", "bench"}};
  BenchSummaryFields(FieldWriter{j}, s);
}
void from_json(const json& j, BenchSummary& s) { BenchSummaryFields(FieldReader{j}, s); }

}  // namespace opverify
