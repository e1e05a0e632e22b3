#include "runner/batch/item_records.h"

#include <map>

#include "runner/common/utf8.h"
#include "runner/judge/standards.h"
#include "runner/judge/verdict_json.h"
#include "runner/results/verify_result.h"

namespace opverify {

using nlohmann::json;

std::string FactId(const std::string& tag, const OperatorJob& op, const WorkItem& item) {
  return op.name + "/@" + tag + "/" + std::to_string(item.id);
}

CaseRecord FactRecord(RecordKind kind, const std::string& tag, const OperatorJob& op,
                      const WorkItem& item, int rank) {
  CaseRecord fact;
  fact.case_id = FactId(tag, op, item);
  fact.op_name = op.name;
  fact.kind = kind;
  fact.case_index = -1;
  fact.passed = true;
  fact.rank = rank;
  return fact;
}

CaseRecord ShapeRecord(const OperatorJob& op, const ShapeResult& shape, const std::string& case_id,
                       int rank) {
  CaseRecord record;
  record.case_id = case_id + "@bench";
  record.op_name = op.name;
  record.kind = RecordKind::kBenchShape;
  record.case_index = -1;
  record.passed = shape.passed;
  record.error_type = shape.error_type;
  record.error_msg = shape.error_msg;
  record.rank = rank;
  record.extra = BenchShapeFacts{case_id, shape};
  return record;
}

CaseRecord CaseRecordOf(const CaseOutcome& c, const OperatorJob& op, const std::string& case_id,
                        int rank) {
  CaseRecord record;
  record.case_id = case_id;
  record.op_name = op.name;
  record.case_index = c.index;
  if (!c.edge_label.empty()) {
    record.params = c.edge_params;
    record.extra["edge_case"] = c.edge_label;
  } else {
    record.params = op.cases.empty() ? json::object() : op.cases[static_cast<std::size_t>(c.index)];
  }
  record.input_desc = c.input_desc;
  record.passed = c.passed;
  record.waived = c.waived();
  record.error_type = c.error_type;
  record.error_msg = CutMiddle(c.error_msg);
  for (const Verdict& v : c.outputs) {
    record.outputs.push_back(VerdictToJson(v));
    if (record.route.empty() || (!v.passed && c.outputs.front().passed))
      record.route = std::string(RouteName(v.route));
  }
  record.timings = c.timings;
  record.timings["wall_ms"] = c.wall_ms;
  record.timings["judge_ms"] = c.judge_ms;
  record.rank = rank;
  record.device = c.device_name;
  record.extra["warnings"] = c.warnings;
  record.extra["golden_device"] = c.golden_device;
  record.extra["details"] = json::parse(CaseDetails(c).dump());
  if (!c.passed) record.extra["failure"] = json::parse(FailureEntry(c).dump());
  record.extra["impl_name"] = op.code.impl_name;
  record.extra["actual_sha256"] = c.actual_sha256;
  return record;
}

CaseRecord OperatorFactsRecord(const OperatorOutcome& outcome, const OperatorJob& op,
                               const WorkItem& item, int rank, const json& left_out) {
  CaseRecord meta = FactRecord(RecordKind::kOperator, "operator", op, item, rank);
  meta.device = outcome.environment.is_object() && outcome.environment.contains("device") &&
                        outcome.environment["device"].is_object()
                    ? outcome.environment["device"].value("name", "")
                    : "";
  OperatorFacts facts;
  facts.environment = outcome.environment;
  facts.lint = outcome.lint;
  facts.non_compute = outcome.non_compute;
  facts.non_compute_given = outcome.non_compute_given;
  facts.case_count = outcome.case_count;
  facts.impl_name = op.code.impl_name;
  facts.task_file = op.code.task_file;
  facts.lint_enabled = op.config.lint;
  facts.allow_torch = outcome.declared_allowances;
  facts.allow_torch_checked = outcome.allowances_checked();
  facts.startup = outcome.startup;  // how its implementation executor started
  if (!left_out.empty()) facts.left_out = left_out.get<std::map<std::string, std::string>>();
  meta.extra = facts;
  return meta;
}

}  // namespace opverify
