#include "reduce/verify_result_reporter.h"

#include <filesystem>

#include "reduce/report_file.h"
#include "runner/results/verify_result.h"

namespace opverify {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

SeedResultParts Parts(const OperatorModel& op) {
  SeedResultParts parts;
  parts.op_name = op.name;
  parts.total_cases = static_cast<int>(op.cases.size());
  parts.passed_cases = op.passed + op.waived;  // the seed's: not failed
  parts.waived_cases = op.waived;
  for (const AllowanceUse& use : op.allowances) parts.allow_torch.push_back(AllowanceUseJson(use));
  for (const CaseModel& c : op.cases) {
    if (c.extra.contains("details"))
      parts.details.push_back(ordered_json::parse(c.extra["details"].dump()));
    if (!c.passed && c.extra.contains("failure")) {
      ordered_json failure = ordered_json::parse(c.extra["failure"].dump());
      // The A/B's verdict on the failure beside it: its class and, where the
      // runs agreed, the reference trust judgements (fp64, torch's device run).
      if (const std::optional<AbRecord>& ab = c.content.ab) {
        failure["ab"] = {
            {"classification", ab->ClassificationJson()},
            {"bitwise_equal", ab->bitwise_equal},
            {"reference_trust", ab->reference_trust ? ab->reference_trust->stored : json(nullptr)}};
      }
      parts.failures.push_back(std::move(failure));
    }
  }
  parts.environment = op.facts.environment;
  parts.lint = op.facts.lint;
  parts.non_compute = op.facts.non_compute;
  if (op.facts.non_compute_given) parts.non_compute_given = *op.facts.non_compute_given;
  return parts;
}

}  // namespace

Status VerifyResultReporter::ReportRun(const RunModel& run) {
  for (const OperatorModel& op : run.operators) {
    VerifyContext verify_context;
    verify_context.impl_name = op.facts.impl_name.value_or("");
    const std::filesystem::path path = std::filesystem::path(context().run_dir) / "ops" /
                                       OperatorFolder(op.name) / "verify_result.json";
    Status written = WriteReportJson(path.string(), SeedVerifyResult(Parts(op), verify_context));
    if (!written.ok()) return written;
  }
  return Status::Ok();
}

}  // namespace opverify
