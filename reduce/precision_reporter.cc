#include "reduce/precision_reporter.h"

#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "reduce/report_file.h"
#include "reduce/text_escape.h"

namespace opverify {

using nlohmann::json;

namespace {

// `object[key]` when it is a string, else `fallback` (null where the judge left it so).
std::string Text(const json& object, const char* key, const std::string& fallback) {
  const auto found = object.is_object() ? object.find(key) : object.end();
  return found != object.end() && found->is_string() ? found->get<std::string>() : fallback;
}

// A figure written as a JSON number, else "-".
std::string Sci(const JudgeNumber& value) {
  if (!value.is_number) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.3e", value.value);
  return text;
}

std::string Shape(const json& shape) {
  if (!shape.is_array()) return "-";
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + shape[i].dump();
  return out + "]";
}

std::string Shape(const std::optional<std::vector<std::int64_t>>& shape) {
  if (!shape) return "-";
  std::string out = "[";
  for (std::size_t i = 0; i < shape->size(); ++i)
    out += (i ? ", " : "") + std::to_string((*shape)[i]);
  return out + "]";
}

std::string InputShapes(const json& input_desc) {
  std::string out;
  for (const auto& input : input_desc) {
    if (!input.is_object() || Text(input, "type", "") != "tensor") continue;
    out += (out.empty() ? "" : ", ") + Shape(input.value("shape", json())) + " " +
           Text(input, "dtype", "?");
  }
  return out.empty() ? "-" : out;
}

// Seed 003's thresholds and how opverify's routes relate to them: the same
// text in every report.
constexpr const char* kPrecisionStandards =
    "\n## Precision standards\n\n"
    "Criterion (seed 003): MERE < threshold and MARE < 10 x threshold, where MERE = mean(rel) "
    "and MARE = "
    "max(rel) over the finite elements, rel = |actual - golden| / max(|golden|, threshold) "
    "(the denominator "
    "clamped at the threshold, as docs/JUDGE.md says).\n\n"
    "| dtype | threshold | MERE upper limit | MARE upper limit |\n|---|---|---|---|\n"
    "| float16 | 2^-10 = 9.77e-4 | 9.77e-4 | 9.77e-3 |\n"
    "| float32 | 2^-13 = 1.22e-4 | 1.22e-4 | 1.22e-3 |\n"
    "| float32 under precision_mode hf32 or tf32 | 2^-11 = 4.88e-4 | 4.88e-4 | 4.88e-3 |\n"
    "| bfloat16 | 2^-7 = 7.81e-3 | 7.81e-3 | 7.81e-2 |\n"
    "| float8_e4m3fn | 2^-3 = 1.25e-1 | 1.25e-1 | 1.25 |\n"
    "| float8_e5m2 | 2^-2 = 2.5e-1 | 2.5e-1 | 2.5 |\n"
    "| any other float dtype (float64, complex parts) | float32's, 2^-13 | 1.22e-4 | 1.22e-3 "
    "|\n"
    "| int8, uint8, int16, uint16, int32, uint32, int64, uint64 | exactly equal | - | - |\n"
    "| bool | exactly equal | - | - |\n\n"
    "opverify judges each output by its route (eco first, NPU Benchmark as fallback, the "
    "quant, integer, bool "
    "and bitwise routes; docs/JUDGE.md) under the standard the manifest chose; the table below "
    "shows, per "
    "case, the route and standard that decided, and MERE/MARE against seed 003's thresholds "
    "for every float "
    "output.\n";

// The operator, its implementation, the device, the cases' output dtypes
// and input shapes.
void Configuration(std::ostringstream& md, const OperatorModel& op) {
  const json& environment = op.facts.environment;
  const auto found = environment.is_object() ? environment.find("device") : environment.end();
  const json device = found != environment.end() ? *found : json::object();
  std::set<std::string> dtypes, shapes;
  for (const CaseModel& c : op.cases) {
    shapes.insert(InputShapes(c.input_desc));
    for (const OutputVerdict& output : c.content.outputs) {
      if (output.dtype) dtypes.insert(*output.dtype);
    }
  }
  md << "## Verification configuration\n\n";
  md << "- operator: " << MarkdownCode(op.name) << ", implementation "
     << MarkdownCode(op.facts.impl_name.value_or("?")) << "\n";
  md << "- device: " << MarkdownCell(Text(device, "name", "unknown")) << " (backend "
     << MarkdownCell(Text(device, "backend", "?")) << ")";
  if (device.contains("compute_units") && device["compute_units"].is_number()) {
    md << ", " << device["compute_units"] << " "
       << MarkdownCell(Text(device, "compute_unit", "cores"));
  }
  md << "\n- cases: " << op.cases.size() << "\n- output dtypes:";
  for (const auto& d : dtypes) md << " " << MarkdownCell(d);
  md << "\n- input shapes:\n";
  for (const auto& s : shapes) md << "  - " << MarkdownCell(s) << "\n";
}

// One row of the error metrics: output i of case c.
void OutputRow(std::ostringstream& md, const CaseModel& c, std::size_t i) {
  const OutputVerdict& o = c.content.outputs[i];
  // Unset where the judge could not compare (a ShapeMismatch has no metrics).
  const MereMareFigures* mm = o.metrics && o.metrics->mere_mare ? &*o.metrics->mere_mare : nullptr;
  const std::string criterion = mm && mm->passed ? (*mm->passed ? "met" : "not met") : "-";
  md << "| " << c.case_index + 1 << " | " << i << " | " << MarkdownCell(o.dtype.value_or("?"))
     << " | " << Shape(o.shape) << " | " << MarkdownCell(o.route.value_or("?")) << " | "
     << MarkdownCell(o.standard.value_or("?")) << " | " << (mm ? Sci(mm->mere) : "-") << " | "
     << (mm ? Sci(mm->mare) : "-") << " | " << (mm ? Sci(mm->threshold) : "-") << " | " << criterion
     << " | " << (o.passed ? "pass" : MarkdownCell(o.error_type.value_or("fail"))) << " |\n";
}

// One row per output of every case; a case with no outputs says its error.
void ErrorMetrics(std::ostringstream& md, const std::vector<CaseModel>& cases) {
  md << "\n## Error metrics\n\n| case | output | dtype | shape | route | standard | MERE | MARE | "
        "threshold | "
        "MERE/MARE criterion | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const CaseModel& c : cases) {
    if (c.content.outputs.empty()) {
      md << "| " << c.case_index + 1 << " | - | - | - | - | - | - | - | - | - | "
         << MarkdownCell(c.error_type) << " |\n";
      continue;
    }
    for (std::size_t i = 0; i < c.content.outputs.size(); ++i) OutputRow(md, c, i);
  }
}

std::string PrecisionReport(const OperatorModel& op) {
  const std::vector<CaseModel>& cases = op.cases;
  const int passed = op.passed + op.waived;  // not failed
  std::ostringstream md;
  md << "# Precision report: " << MarkdownCell(op.name) << "\n\n";
  Configuration(md, op);
  md << kPrecisionStandards;
  md << "\n## Verification results\n\n- passed: " << passed
     << (op.waived > 0 ? " (" + std::to_string(op.waived) +
                             " waived: declared exceptions, verify_result.json)"
                       : std::string())
     << "\n- failed: " << cases.size() - passed << "\n- total: " << cases.size() << "\n";
  ErrorMetrics(md, cases);
  md << "\n## Criteria\n\n"
        "- A float output meets seed 003's criterion when MERE < threshold and MARE < 10 x "
        "threshold for its "
        "dtype; integer and bool outputs must be exactly equal.\n"
        "- A case passes when every output passes the route opverify's judge took for it; the "
        "operator passes "
        "when every case passes ("
     << passed << " of " << cases.size() << ": "
     << (passed == static_cast<int>(cases.size()) && !cases.empty() ? "PASS" : "FAIL") << ").\n";

  return md.str();
}

}  // namespace

Status PrecisionReporter::ReportRun(const RunModel& run) {
  for (const OperatorModel& op : run.operators) {
    const std::filesystem::path path = std::filesystem::path(context().run_dir) / "ops" /
                                       OperatorFolder(op.name) / "precision_report.md";
    Status written = WriteReportFile(path.string(), PrecisionReport(op));
    if (!written.ok()) return written;
  }
  return Status::Ok();
}

}  // namespace opverify
