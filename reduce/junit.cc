#include "reduce/junit.h"

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

Status WriteJUnit(const std::string& path, const JUnitInput& input) {
  int tests = 0, failures = 0;
  double total_s = 0;
  for (const auto& [name, cases] : input.operators) {
    tests += static_cast<int>(cases.size());
    for (const CaseRecord* c : cases) {
      failures += c->passed ? 0 : 1;
      total_s += Seconds(*c);
    }
  }
  std::ostringstream xml;
  xml << std::fixed << std::setprecision(6);  // xs:decimal has no exponent
  xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml << "<testsuites name=\"" << MarkupEscape(input.run_name) << "\" tests=\"" << tests << "\" failures=\"" << failures
      << "\" errors=\"0\" time=\"" << total_s << "\">\n";
  for (const auto& [name, cases] : input.operators) {
    int op_failures = 0;
    double op_s = 0;
    for (const CaseRecord* c : cases) {
      op_failures += c->passed ? 0 : 1;
      op_s += Seconds(*c);
    }
    xml << "  <testsuite name=\"" << MarkupEscape(name) << "\" tests=\"" << cases.size() << "\" failures=\""
        << op_failures << "\" errors=\"0\" skipped=\"0\" time=\"" << op_s << "\">\n";
    const auto repro = input.repro.find(name);
    if (repro != input.repro.end()) {
      xml << "    <properties>\n      <property name=\"repro\" value=\"" << MarkupEscape(repro->second)
          << "\"/>\n    </properties>\n";
    }
    for (const CaseRecord* c : cases) {
      xml << "    <testcase classname=\"" << MarkupEscape(name) << "\" name=\"" << MarkupEscape(c->case_id) << "\" time=\""
          << Seconds(*c) << "\"";
      if (c->passed) {
        xml << "/>\n";
        continue;
      }
      xml << ">\n";
      const std::string ab = c->ab.is_object() && c->ab.contains("classification") && c->ab["classification"].is_string()
                                 ? c->ab["classification"].get<std::string>()
                                 : "";
      xml << "      <failure type=\"" << MarkupEscape(c->error_type) << "\" message=\""
          << MarkupEscape(c->error_type + ": " + FirstLine(c->error_msg) + (ab.empty() ? "" : " [A/B: " + ab + "]"))
          << "\">" << MarkupEscape(c->error_msg) << "</failure>\n";
      std::ostringstream out;
      out << "input: " << c->input_desc.dump() << "\nrank " << c->rank << ", device " << c->device << "\nstored at "
          << c->stored_at << "\n";
      if (c->ab.is_object()) {
        out << "A/B: " << (ab.empty() ? "not classified" : ab) << "\n";
        for (const auto& attempt : c->ab.value("attempts", nlohmann::json::array())) {
          out << "  attempt " << attempt.dump() << "\n";
        }
      }
      xml << "      <system-out>" << MarkupEscape(out.str()) << "</system-out>\n";
      xml << "    </testcase>\n";
    }
    xml << "  </testsuite>\n";
  }
  xml << "</testsuites>\n";
  return WriteReportFile(path, xml.str());
}

}  // namespace opverify
