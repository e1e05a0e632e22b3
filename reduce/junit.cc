#include "reduce/junit.h"

#include <iomanip>
#include <sstream>

#include "reduce/report_file.h"

namespace opverify {

namespace {

// The next UTF-8 code point of `text` at `i` (advancing i), or -1 for a bad sequence (one byte eaten).
long NextCodePoint(const std::string& text, std::size_t& i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  int length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || i + length > text.size()) {
    ++i;
    return -1;
  }
  long cp = length == 1 ? c : c & (0x7F >> length);
  for (int k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      ++i;
      return -1;
    }
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  i += length;
  return cp;
}

bool XmlAllowed(long cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
         (cp >= 0x10000 && cp <= 0x10FFFF);
}

double Seconds(const CaseRecord& c) { return c.timings.value("wall_ms", 0.0) / 1e3; }

std::string FirstLine(const std::string& text, std::size_t limit = 300) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > limit ? line.substr(0, limit) + "..." : line;
}

}  // namespace

std::string XmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t start = i;
    const long cp = NextCodePoint(text, i);
    if (cp < 0 || !XmlAllowed(cp)) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      continue;
    }
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out.append(text, start, i - start);
    }
  }
  return out;
}

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
  xml << "<testsuites name=\"" << XmlEscape(input.run_name) << "\" tests=\"" << tests << "\" failures=\"" << failures
      << "\" errors=\"0\" time=\"" << total_s << "\">\n";
  for (const auto& [name, cases] : input.operators) {
    int op_failures = 0;
    double op_s = 0;
    for (const CaseRecord* c : cases) {
      op_failures += c->passed ? 0 : 1;
      op_s += Seconds(*c);
    }
    xml << "  <testsuite name=\"" << XmlEscape(name) << "\" tests=\"" << cases.size() << "\" failures=\""
        << op_failures << "\" errors=\"0\" skipped=\"0\" time=\"" << op_s << "\">\n";
    const auto repro = input.repro.find(name);
    if (repro != input.repro.end()) {
      xml << "    <properties>\n      <property name=\"repro\" value=\"" << XmlEscape(repro->second)
          << "\"/>\n    </properties>\n";
    }
    for (const CaseRecord* c : cases) {
      xml << "    <testcase classname=\"" << XmlEscape(name) << "\" name=\"" << XmlEscape(c->case_id) << "\" time=\""
          << Seconds(*c) << "\"";
      if (c->passed) {
        xml << "/>\n";
        continue;
      }
      xml << ">\n";
      const std::string ab = c->ab.is_object() && c->ab.contains("classification") && c->ab["classification"].is_string()
                                 ? c->ab["classification"].get<std::string>()
                                 : "";
      xml << "      <failure type=\"" << XmlEscape(c->error_type) << "\" message=\""
          << XmlEscape(c->error_type + ": " + FirstLine(c->error_msg) + (ab.empty() ? "" : " [A/B: " + ab + "]"))
          << "\">" << XmlEscape(c->error_msg) << "</failure>\n";
      std::ostringstream out;
      out << "input: " << c->input_desc.dump() << "\nrank " << c->rank << ", device " << c->device << "\nstored at "
          << c->stored_at << "\n";
      if (c->ab.is_object()) {
        out << "A/B: " << (ab.empty() ? "not classified" : ab) << "\n";
        for (const auto& attempt : c->ab.value("attempts", nlohmann::json::array())) {
          out << "  attempt " << attempt.dump() << "\n";
        }
      }
      xml << "      <system-out>" << XmlEscape(out.str()) << "</system-out>\n";
      xml << "    </testcase>\n";
    }
    xml << "  </testsuite>\n";
  }
  xml << "</testsuites>\n";
  return WriteReportFile(path, xml.str());
}

}  // namespace opverify
