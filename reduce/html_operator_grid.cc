// report.html's operator grid: one <details> per group (manifest tag or
// family), failing groups open; per operator one row (its cases per dtype,
// speedup, latency per benchmarked shape, the history's trend, links to its
// files) and one row per failing case. Each operator is a <tbody> whose
// data-k holds what the filter matches (name, failing case ids, error
// types), so the page's script filters 2,000 operators by one attribute each.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "reduce/html_page.h"
#include "reduce/text_escape.h"

namespace opverify::html {
namespace {

constexpr std::size_t kFailuresPerOperator = 20;  // failing case rows shown per operator

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// "#1 0.0123 · #2 0.0456": each measured shape's implementation latency, by
// its case number (perf_result.json's case_idx).
std::string ShapeLatencies(const OperatorModel& op) {
  if (!op.performance) return "-";
  std::string text;
  for (const ShapeResult& shape : op.performance->result.shapes) {
    const std::optional<double>& ms = shape.implementation.latency_ms;
    text += (text.empty() ? "#" : " \xc2\xb7 #") + std::to_string(shape.case_idx) + " " +
            (shape.passed && ms ? Milliseconds(*ms) : "failed");
  }
  return text.empty() ? "-" : text;
}

void Row(std::ostringstream& html, const OperatorModel& op, const std::set<std::string>& dtypes,
         const std::vector<const FailureRow*>& failures,
         const std::vector<const WaivedRow*>& waived, const ReportExtras& extras) {
  std::string key = op.name;
  for (const auto& [type, count] : op.error_types) key += " " + type;
  for (const FailureRow* f : failures) key += " " + f->case_id;
  if (!waived.empty()) key += " waived";
  html << "<tbody id=\"" << MarkupEscape(OperatorAnchor(op.name)) << "\" class=\"op"
       << (op.failed > 0 ? " failing" : "") << "\" data-k=\"" << MarkupEscape(Lower(key))
       << "\">\n<tr><th>" << MarkupEscape(op.name) << "</th>";
  for (const std::string& dtype : dtypes) {
    const auto cell = op.dtypes.find(dtype);
    if (cell == op.dtypes.end()) {
      html << "<td class=\"none\"></td>";
      continue;
    }
    const int cases = cell->second.cases, failed = cell->second.failed;
    html << "<td class=\"" << (failed > 0 ? "fail" : "pass") << "\" title=\"" << failed << " of "
         << cases << " cases failed\">"
         << (failed > 0 ? "&#10007; " + std::to_string(failed) + "/" : "&#10003; ") << cases
         << "</td>";
  }
  html << "<td>" << (op.performance ? SpeedupText(op.performance->speedup) : "-") << "</td><td>"
       << MarkupEscape(ShapeLatencies(op)) << "</td><td>";
  if (const auto history = extras.history.find(op.name); history != extras.history.end())
    html << Sparkline(history->second);
  html << "</td><td class=\"files\"><a href=\"" << OperatorFileLink(op.name, "verify_result.json")
       << "\">verify</a> <a href=\"" << OperatorFileLink(op.name, "precision_report.md")
       << "\">precision</a>";
  if (op.performance)
    html << " <a href=\"" << OperatorFileLink(op.name, "perf_result.json") << "\">perf</a>";
  html << "</td></tr>\n";
  const std::size_t columns = dtypes.size() + 5;
  for (std::size_t i = 0; i < failures.size() && i < kFailuresPerOperator; ++i) {
    const FailureRow& f = *failures[i];
    html << "<tr class=\"case\"><td colspan=\"" << columns << "\">" << MarkupEscape(f.case_id)
         << " <b>" << MarkupEscape(f.error_type.text()) << "</b>"
         << (f.AbClass() ? " (" + MarkupEscape(*f.AbClass()) + ")" : "") << ": "
         << MarkupEscape(f.message.substr(0, 200)) << (f.message.size() > 200 ? "&hellip;" : "")
         << "</td></tr>\n";
  }
  for (std::size_t i = 0; i < waived.size() && i < kFailuresPerOperator; ++i) {
    std::string allowed;
    if (waived[i]->waivers.is_array()) {
      for (const nlohmann::json& w : waived[i]->waivers)
        allowed += (allowed.empty() ? "" : "; ") + WaiverLine(w);
    }
    html << "<tr class=\"case waived\"><td colspan=\"" << columns << "\">"
         << MarkupEscape(waived[i]->case_id) << " <b>waived</b>: " << MarkupEscape(allowed)
         << "</td></tr>\n";
  }
  if (waived.size() > kFailuresPerOperator) {
    html << "<tr class=\"case waived\"><td colspan=\"" << columns << "\">and "
         << waived.size() - kFailuresPerOperator
         << " more waived cases (verify_result.json)</td></tr>\n";
  }
  if (failures.size() > kFailuresPerOperator) {
    html << "<tr class=\"case\"><td colspan=\"" << columns << "\">and "
         << failures.size() - kFailuresPerOperator
         << " more failed cases (verify_result.json)</td></tr>\n";
  }
  html << "</tbody>\n";
}

}  // namespace

void OperatorGrid(std::ostringstream& html, const RunModel& run, const ReportExtras& extras) {
  std::set<std::string> dtypes;
  for (const OperatorModel& op : run.operators) {
    for (const auto& [dtype, cell] : op.dtypes) dtypes.insert(dtype);
  }
  std::map<std::string, std::vector<const FailureRow*>> failures;  // by operator
  for (const FailureRow& f : run.failures) failures[f.op].push_back(&f);
  std::map<std::string, std::vector<const WaivedRow*>> waived;  // by operator
  for (const WaivedRow& w : run.waived) waived[w.op].push_back(&w);
  std::map<std::string, std::vector<const OperatorModel*>> groups;
  for (const OperatorModel& op : run.operators)
    groups[OperatorGroup(op.name, extras)].push_back(&op);

  html << "<h2 id=\"operators\">Operators</h2>\n<p class=\"filter\"><input id=\"filter\" "
          "type=\"search\" size=\"40\" placeholder=\"filter: operator, case id or error type\" "
          "aria-label=\"filter operators\"> <span id=\"filter-count\"></span></p>\n<p "
          "class=\"note\">"
       << groups.size() << " groups by ";
  if (!extras.tags.empty()) {
    html << "the manifest's first tag";
  } else {
    html << "family (the name's first word"
         << (extras.tags_note.empty() ? "" : "; no tags: " + MarkupEscape(extras.tags_note)) << ")";
  }
  html << "; groups with failures are open. Cells: cases per dtype (&#10003; passed, &#10007; "
          "failed/all); latency: the implementation's median per benchmarked shape, ms; trend: "
          "the geometric-mean latency over the nights of <code>--history</code>.</p>\n";
  static const std::vector<const FailureRow*> kNone;
  static const std::vector<const WaivedRow*> kNoneWaived;
  for (const auto& [group, ops] : groups) {
    int failing = 0, cases = 0;
    for (const OperatorModel* op : ops) {
      failing += op->failed > 0 ? 1 : 0;
      cases += op->passed + op->waived + op->failed;
    }
    html << "<details class=\"group\"" << (failing > 0 ? " open" : "") << "><summary><b>"
         << MarkupEscape(group) << "</b>: " << ops.size() << " operators, " << cases << " cases"
         << (failing > 0 ? ", <span class=\"bad\">" + std::to_string(failing) + " failing</span>"
                         : "")
         << "</summary>\n<table class=\"grid\">\n<thead><tr><th>operator</th>";
    for (const std::string& dtype : dtypes) html << "<th>" << MarkupEscape(dtype) << "</th>";
    html << "<th>speedup</th><th>latency per shape "
            "(ms)</th><th>trend</th><th>files</th></tr></thead>\n";
    for (const OperatorModel* op : ops) {
      const auto failed = failures.find(op->name);
      const auto passed_waived = waived.find(op->name);
      Row(html, *op, dtypes, failed == failures.end() ? kNone : failed->second,
          passed_waived == waived.end() ? kNoneWaived : passed_waived->second, extras);
    }
    html << "</table>\n</details>\n";
  }
}

}  // namespace opverify::html
