#include "reduce/junit_reporter.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

#include "reduce/performance_gates.h"
#include "reduce/report_file.h"
#include "reduce/text_escape.h"
#include "runner/common/utf8.h"

namespace opverify {

namespace {

double Seconds(const CaseModel& c) { return c.content.timings.wall_ms / 1e3; }

std::string FirstLine(const std::string& text, std::size_t limit = 300) {
  std::string line = text.substr(0, text.find('\n'));
  return CodePointCount(line) > limit ? Utf8Prefix(line, limit) + "..." : line;
}

std::string Number(double value) {
  std::ostringstream out;
  out << std::setprecision(6) << value;
  return out.str();
}

void Property(std::ostringstream& xml, const std::string& name, const std::string& value) {
  xml << "        <property name=\"" << MarkupEscape(name) << "\" value=\"" << MarkupEscape(value)
      << "\"/>\n";
}

// The declared exceptions a waived case needed (extra.details.waivers).
nlohmann::json CaseWaivers(const CaseModel& c) {
  return c.waived ? c.content.waivers : nlohmann::json::array();
}

// What a waived case's system-out says: each allowance it needed, why, and
// what it covered.
std::string WaiverOutput(const nlohmann::json& waivers) {
  std::string out = "waived: passed using torch operators the manifest allows (allow_torch)\n";
  for (const nlohmann::json& w : waivers) {
    out += "  " + WaiverLine(w) + ", declared at " + WaiverField(w, "declared_at") + "; found at " +
           FindingsText(w) + "\n";
  }
  return out;
}

// A testcase's properties: for a waived case (it passes: CI must not fail on
// a declared exception, but it says so) the verdict and each allowance; for
// a benchmarked shape the latency (ms) of each side and the speedup.
void CaseProperties(std::ostringstream& xml, const ShapeResult* shape, const CaseModel& c,
                    const nlohmann::json& waivers) {
  if (shape == nullptr && !c.waived) return;
  xml << "      <properties>\n";
  if (c.waived) {
    Property(xml, "verdict", "waived");
    for (const nlohmann::json& w : waivers) {
      Property(xml, "waiver",
               WaiverField(w, "op") + ": " + WaiverField(w, "why") + " [" +
                   WaiverField(w, "declared_at") + "]");
    }
  }
  if (shape != nullptr) {
    if (shape->implementation.latency_ms)
      Property(xml, "latency_ms", Number(*shape->implementation.latency_ms));
    if (shape->framework.latency_ms)
      Property(xml, "framework_latency_ms", Number(*shape->framework.latency_ms));
    if (shape->speedup) Property(xml, "speedup", Number(*shape->speedup));
    if (!shape->passed && !shape->error_type.empty())
      Property(xml, "bench_error", shape->error_type);
  }
  xml << "      </properties>\n";
}

struct SuiteCounts {
  int failures = 0, errors = 0, skipped = 0;
};

SuiteCounts Count(const OperatorModel* op, const std::vector<const SkippedCase*>& skipped) {
  SuiteCounts counts;
  counts.skipped = static_cast<int>(skipped.size());
  if (op == nullptr) return counts;
  for (const CaseModel& c : op->cases) {
    if (c.passed) continue;
    // Not judged (JUnit's <error>: the test itself broke), or judged and found wrong.
    (c.content.error_type.CouldNotJudge() ? counts.errors : counts.failures) += 1;
  }
  return counts;
}

void WriteCase(std::ostringstream& xml, const std::string& name, const CaseModel& c,
               const ShapeResult* shape) {
  const nlohmann::json waivers = CaseWaivers(c);
  xml << "    <testcase classname=\"" << MarkupEscape(name) << "\" name=\""
      << MarkupEscape(c.case_id) << "\" time=\"" << Seconds(c) << "\""
      << (c.waived ? " status=\"waived\"" : "");
  if (c.passed && shape == nullptr && !c.waived) {
    xml << "/>\n";
    return;
  }
  xml << ">\n";
  CaseProperties(xml, shape, c, waivers);
  if (c.passed) {
    if (c.waived)
      xml << "      <system-out>" << MarkupEscape(WaiverOutput(waivers)) << "</system-out>\n";
    xml << "    </testcase>\n";
    return;
  }
  const std::optional<AbRecord>& ab_record = c.content.ab;
  const std::string ab = ab_record ? ab_record->classification.value_or("") : "";
  const char* element = c.content.error_type.CouldNotJudge() ? "error" : "failure";
  xml << "      <" << element << " type=\"" << MarkupEscape(c.error_type) << "\" message=\""
      << MarkupEscape(c.error_type + ": " + FirstLine(c.error_msg) +
                      (ab.empty() ? "" : " [A/B: " + ab + "]"))
      << "\">" << MarkupEscape(c.error_msg) << "</" << element << ">\n";
  std::ostringstream out;
  out << "input: " << c.input_desc.dump() << "\nrank " << c.rank << ", device " << c.device
      << "\nstored at " << c.stored_at << "\n";
  if (ab_record) {
    out << "A/B: " << (ab.empty() ? "not classified" : ab) << "\n";
    for (const auto& attempt : ab_record->attempts) out << "  attempt " << attempt.dump() << "\n";
    if (const std::optional<ReferenceTrust>& trust = ab_record->reference_trust) {
      out << "reference trust: " << trust->reason
          << "\n  float64 golden: " << TrustJudgementLine(trust->fp64)
          << "\n  torch's device run: " << TrustJudgementLine(trust->device_reference) << "\n";
    }
  }
  xml << "      <system-out>" << MarkupEscape(out.str()) << "</system-out>\n";
  xml << "    </testcase>\n";
}

// The performance gates (reduce/performance_gates.h): a violated reference
// or a slow-down past its noise floor is a failure CI sees; a reference of
// something not measured is skipped.
void WriteGates(std::ostringstream& xml, const std::vector<PerformanceGate>& gates, int failures) {
  if (gates.empty()) return;
  int skipped = 0;
  for (const PerformanceGate& g : gates) skipped += g.measured ? 0 : 1;
  xml << "  <testsuite name=\"opverify.performance\" tests=\"" << gates.size() << "\" failures=\""
      << failures << "\" errors=\"0\" skipped=\"" << skipped << "\" time=\"0\">\n";
  for (const PerformanceGate& g : gates) {
    xml << "    <testcase classname=\"" << MarkupEscape(g.op) << "\" name=\""
        << MarkupEscape(g.name) << "\" time=\"0\">\n";
    if (!g.type.empty()) {
      xml << "      <failure type=\"" << MarkupEscape(g.type) << "\" message=\""
          << MarkupEscape(g.message) << "\">" << MarkupEscape(g.message) << "</failure>\n";
    } else if (!g.measured) {
      xml << "      <skipped message=\"" << MarkupEscape(g.message) << "\"/>\n";
    } else {
      xml << "      <system-out>" << MarkupEscape(g.message) << "</system-out>\n";
    }
    xml << "    </testcase>\n";
  }
  xml << "  </testsuite>\n";
}

// The run's cases by operator (std::map: suites in name order), with the
// cases not run; an operator none of whose cases ran has a null model.
struct OperatorSuites {
  std::map<std::string, const OperatorModel*> ops;
  std::map<std::string, std::vector<const SkippedCase*>> skipped;
};

OperatorSuites GroupByOperator(const RunModel& run) {
  OperatorSuites suites;
  for (const OperatorModel& op : run.operators) suites.ops[op.name] = &op;
  for (const SkippedCase& s : run.skipped) {
    suites.skipped[s.op].push_back(&s);
    suites.ops.emplace(s.op, nullptr);
  }
  return suites;
}

double CasesSeconds(const OperatorModel* op) {
  double seconds = 0;
  if (op == nullptr) return seconds;
  for (const CaseModel& c : op->cases) seconds += Seconds(c);
  return seconds;
}

// <testsuites>: the totals of every suite, the gates' included.
void WriteSuitesHeader(std::ostringstream& xml, const RunModel& run, OperatorSuites& suites,
                       const std::vector<PerformanceGate>& gates, int gate_failures) {
  double total_s = 0;
  SuiteCounts all;
  for (const auto& [name, op] : suites.ops) {
    const SuiteCounts counts = Count(op, suites.skipped[name]);
    all.failures += counts.failures;
    all.errors += counts.errors;
    if (op == nullptr) continue;
    for (const CaseModel& c : op->cases)
      total_s += Seconds(c);  // case by case: the rounding of every run so far
  }
  int gate_skipped = 0;
  for (const PerformanceGate& g : gates) gate_skipped += g.measured ? 0 : 1;
  xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml << "<testsuites name=\"" << MarkupEscape(run.info.manifest_name.value_or("opverify"))
      << "\" tests=\""
      << run.totals.cases + static_cast<int>(run.skipped.size()) + run.totals.lost +
             static_cast<int>(gates.size())
      << "\" failures=\"" << all.failures + gate_failures << "\" errors=\""
      << all.errors + run.totals.lost << "\" skipped=\""
      << run.skipped.size() + static_cast<std::size_t>(gate_skipped) << "\" time=\"" << total_s
      << "\">\n";
}

// Results the run should hold and does not: one error each, so that no CI
// reads a run whose data are gone as a pass.
void WriteLost(std::ostringstream& xml, const RunModel& run) {
  if (run.totals.lost <= 0) return;
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

// An operator suite's properties: how to run it again, its latency and
// speedup, the build, and the stale allowances that name it.
void SuiteProperties(std::ostringstream& xml, const RunModel& run, const std::string& name,
                     const OperatorModel* op, const std::string& built) {
  xml << "    <properties>\n";
  if (op != nullptr) {
    xml << "      <property name=\"repro\" value=\"" << MarkupEscape(op->repro) << "\"/>\n";
    if (op->performance) {
      const OperatorPerformance& perf = *op->performance;
      if (perf.implementation_ms)
        xml << "      <property name=\"latency_ms\" value=\"" << Number(*perf.implementation_ms)
            << "\"/>\n";
      if (perf.framework_ms)
        xml << "      <property name=\"framework_latency_ms\" value=\""
            << Number(*perf.framework_ms) << "\"/>\n";
      if (perf.speedup)
        xml << "      <property name=\"speedup\" value=\"" << Number(*perf.speedup) << "\"/>\n";
    }
  }
  if (!built.empty())
    xml << "      <property name=\"opverify\" value=\"" << MarkupEscape(built) << "\"/>\n";
  for (const AllowanceUse& use : run.allowances) {
    if (use.State() != "stale" ||
        std::find(use.operators.begin(), use.operators.end(), name) == use.operators.end())
      continue;
    Property(xml, "stale_allowance", StaleAllowanceLine(use));
  }
  xml << "    </properties>\n";
}

// One operator's suite: its cases (with their benchmarked shapes) and the
// cases not run.
void WriteSuite(std::ostringstream& xml, const RunModel& run, const std::string& name,
                const OperatorModel* op, const std::vector<const SkippedCase*>& not_run,
                const std::string& built) {
  const SuiteCounts counts = Count(op, not_run);
  const std::size_t ran = op != nullptr ? op->cases.size() : 0;
  xml << "  <testsuite name=\"" << MarkupEscape(name) << "\" tests=\"" << ran + not_run.size()
      << "\" failures=\"" << counts.failures << "\" errors=\"" << counts.errors << "\" skipped=\""
      << counts.skipped << "\" time=\"" << CasesSeconds(op) << "\">\n";
  SuiteProperties(xml, run, name, op, built);
  if (op != nullptr) {
    std::map<int, const ShapeResult*> shapes;  // by case index, from 0
    if (op->performance) {
      for (const ShapeResult& shape : op->performance->result.shapes)
        shapes[shape.case_idx - 1] = &shape;
    }
    for (const CaseModel& c : op->cases) {
      const auto shape = shapes.find(c.case_index);
      WriteCase(xml, name, c, shape != shapes.end() ? shape->second : nullptr);
    }
  }
  for (const SkippedCase* s : not_run) {
    xml << "    <testcase classname=\"" << MarkupEscape(name) << "\" name=\""
        << MarkupEscape(s->case_id) << "\" time=\"0\">\n      <skipped message=\""
        << MarkupEscape(s->reason) << "\"/>\n    </testcase>\n";
  }
  xml << "  </testsuite>\n";
}

}  // namespace

Status JUnitReporter::ReportRun(const RunModel& run) {
  OperatorSuites suites = GroupByOperator(run);
  const std::vector<PerformanceGate> gates = context().extras != nullptr
                                                 ? PerformanceGates(*context().extras)
                                                 : std::vector<PerformanceGate>{};
  int gate_failures = 0;
  for (const PerformanceGate& g : gates) gate_failures += g.type.empty() ? 0 : 1;
  std::ostringstream xml;
  xml << std::fixed << std::setprecision(6);  // xs:decimal has no exponent
  WriteSuitesHeader(xml, run, suites, gates, gate_failures);
  WriteLost(xml, run);
  const std::string built = RunVersionLine(run.info);
  for (const auto& [name, op] : suites.ops)
    WriteSuite(xml, run, name, op, suites.skipped[name], built);
  WriteGates(xml, gates, gate_failures);
  xml << "</testsuites>\n";
  return WriteReportFile((std::filesystem::path(context().run_dir) / "junit.xml").string(),
                         xml.str());
}

}  // namespace opverify
