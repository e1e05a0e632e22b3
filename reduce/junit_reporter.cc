#include "reduce/junit_reporter.h"

#include <filesystem>
#include <iomanip>
#include <sstream>

#include "reduce/report_file.h"
#include "reduce/text_escape.h"
#include "runner/common/utf8.h"

namespace opverify {

namespace {

double Seconds(const CaseRecord& c) { return c.timings.value("wall_ms", 0.0) / 1e3; }

std::string FirstLine(const std::string& text, std::size_t limit = 300) {
  std::string line = text.substr(0, text.find('\n'));
  return CodePointCount(line) > limit ? Utf8Prefix(line, limit) + "..." : line;
}

}  // namespace

Status JUnitReporter::ReportRun(const RunModel& run) {
  double total_s = 0;
  for (const OperatorModel& op : run.operators) {
    for (const CaseRecord& c : op.cases) total_s += Seconds(c);
  }
  std::ostringstream xml;
  xml << std::fixed << std::setprecision(6);  // xs:decimal has no exponent
  xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml << "<testsuites name=\""
      << MarkupEscape(run.run_info.value("manifest_name", std::string("opverify"))) << "\" tests=\""
      << run.totals.cases + run.totals.lost << "\" failures=\"" << run.totals.failed
      << "\" errors=\"" << run.totals.lost << "\" time=\"" << total_s << "\">\n";
  // Results the run should hold and does not: one error each, so that no CI
  // reads a run whose data are gone as a pass.
  if (run.totals.lost > 0) {
    xml << "  <testsuite name=\"opverify.store\" tests=\"" << run.totals.lost
        << "\" failures=\"0\" errors=\"" << run.totals.lost << "\" skipped=\"0\" time=\"0\">\n";
    int k = 0;
    for (const auto* lines : {&run.problems, &run.incomplete}) {
      const char* type = lines == &run.problems ? "UnreadableResults" : "MissingResults";
      for (const std::string& line : *lines) {
        xml << "    <testcase classname=\"opverify.store\" name=\"lost-" << ++k
            << "\" time=\"0\">\n      <error type=\"" << type << "\" message=\""
            << MarkupEscape(FirstLine(line)) << "\">" << MarkupEscape(line)
            << "</error>\n    </testcase>\n";
      }
    }
    xml << "  </testsuite>\n";
  }
  const std::string built = RunVersionLine(run.run_info);
  for (const OperatorModel& op : run.operators) {
    const std::string& name = op.name;
    double op_s = 0;
    for (const CaseRecord& c : op.cases) op_s += Seconds(c);
    xml << "  <testsuite name=\"" << MarkupEscape(name) << "\" tests=\"" << op.cases.size()
        << "\" failures=\"" << op.failed << "\" errors=\"0\" skipped=\"0\" time=\"" << op_s
        << "\">\n";
    xml << "    <properties>\n      <property name=\"repro\" value=\"" << MarkupEscape(op.repro)
        << "\"/>\n";
    if (!built.empty())
      xml << "      <property name=\"opverify\" value=\"" << MarkupEscape(built) << "\"/>\n";
    xml << "    </properties>\n";
    for (const CaseRecord& c : op.cases) {
      xml << "    <testcase classname=\"" << MarkupEscape(name) << "\" name=\""
          << MarkupEscape(c.case_id) << "\" time=\"" << Seconds(c) << "\"";
      if (c.passed) {
        xml << "/>\n";
        continue;
      }
      xml << ">\n";
      const std::string ab =
          c.ab.is_object() && c.ab.contains("classification") && c.ab["classification"].is_string()
              ? c.ab["classification"].get<std::string>()
              : "";
      xml << "      <failure type=\"" << MarkupEscape(c.error_type) << "\" message=\""
          << MarkupEscape(c.error_type + ": " + FirstLine(c.error_msg) +
                          (ab.empty() ? "" : " [A/B: " + ab + "]"))
          << "\">" << MarkupEscape(c.error_msg) << "</failure>\n";
      std::ostringstream out;
      out << "input: " << c.input_desc.dump() << "\nrank " << c.rank << ", device " << c.device
          << "\nstored at " << c.stored_at << "\n";
      if (c.ab.is_object()) {
        out << "A/B: " << (ab.empty() ? "not classified" : ab) << "\n";
        for (const auto& attempt : c.ab.value("attempts", nlohmann::json::array())) {
          out << "  attempt " << attempt.dump() << "\n";
        }
        const nlohmann::json trust = c.ab.value("reference_trust", nlohmann::json());
        if (trust.is_object()) {
          out << "reference trust: " << trust.value("reason", "")
              << "\n  float64 golden: " << TrustJudgementLine(trust.value("fp64", nlohmann::json()))
              << "\n  torch's device run: "
              << TrustJudgementLine(trust.value("device_reference", nlohmann::json())) << "\n";
        }
      }
      xml << "      <system-out>" << MarkupEscape(out.str()) << "</system-out>\n";
      xml << "    </testcase>\n";
    }
    xml << "  </testsuite>\n";
  }
  xml << "</testsuites>\n";
  return WriteReportFile((std::filesystem::path(context().run_dir) / "junit.xml").string(),
                         xml.str());
}

}  // namespace opverify
