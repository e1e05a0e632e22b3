#include "reduce/html_reporter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <set>
#include <sstream>
#include <vector>

#include "reduce/precision_margin.h"
#include "reduce/report_file.h"
#include "reduce/text_escape.h"

namespace opverify {
namespace {

constexpr const char* kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
td.pass { background: #d9f2d9; } td.fail { background: #f8d0d0; } td.none { background: #f4f4f4; color: #999; }
pre { white-space: pre-wrap; word-break: break-word; max-width: 60em; margin: 0; font-size: 0.85em; }
code { font-size: 0.85em; }
.totals { font-size: 1.1em; } .bad { color: #b00; font-weight: bold; }
svg text { font-size: 11px; fill: #333; } rect.bar { fill: #4a7fc1; } line.parity { stroke: #b00; }
)";

std::string Fixed(double value, int decimals) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(decimals) << value;
  return text.str();
}

std::string SpeedupText(const std::optional<double>& value) {
  return value ? Fixed(*value, 2) + "x" : "-";
}

// Operators' speedups in bins of powers of two, from <= 1/8 to >= 8.
void SpeedupChart(std::ostringstream& html, const std::vector<double>& speedups) {
  const int first = -3, last = 3;  // bins: [2^k, 2^(k+1)) for k in first..last-1, ends open
  std::vector<int> counts(last - first + 1, 0);
  for (double s : speedups) {
    if (!(s > 0) || !std::isfinite(s)) continue;
    int k = static_cast<int>(std::floor(std::log2(s)));
    k = std::clamp(k, first, last);
    counts[static_cast<std::size_t>(k - first)] += 1;
  }
  const int most = std::max(1, *std::max_element(counts.begin(), counts.end()));
  const int bar_w = 60, gap = 10, height = 160, top = 20, bottom = 40;
  const int width = static_cast<int>(counts.size()) * (bar_w + gap) + gap;
  html << "<svg class=\"chart\" id=\"speedup-chart\" width=\"" << width << "\" height=\""
       << height + top + bottom << "\" viewBox=\"0 0 " << width << " " << height + top + bottom
       << "\" role=\"img\" "
       << "aria-label=\"operators by speedup\">\n";
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const int k = first + static_cast<int>(i);
    const int x = gap + static_cast<int>(i) * (bar_w + gap);
    const int h = counts[i] * height / most;
    const std::string label = k == first ? "< " + Fixed(std::pow(2.0, k + 1), 2) + "x"
                              : k == last
                                  ? ">= " + Fixed(std::pow(2.0, k), 0) + "x"
                                  : Fixed(std::pow(2.0, k), k < 0 ? 2 : 0) + "-" +
                                        Fixed(std::pow(2.0, k + 1), k + 1 < 0 ? 2 : 0) + "x";
    if (counts[i] > 0) {
      html << "  <rect class=\"bar\" x=\"" << x << "\" y=\"" << top + height - h << "\" width=\""
           << bar_w << "\" height=\"" << h << "\"><title>" << counts[i] << " operators, " << label
           << "</title></rect>\n";
      html << "  <text x=\"" << x + bar_w / 2 << "\" y=\"" << top + height - h - 4
           << "\" text-anchor=\"middle\">" << counts[i] << "</text>\n";
    }
    html << "  <text x=\"" << x + bar_w / 2 << "\" y=\"" << top + height + 16
         << "\" text-anchor=\"middle\">" << MarkupEscape(label) << "</text>\n";
  }
  // The parity line: between the bins below and above 1x.
  const int parity_x = gap + (0 - first) * (bar_w + gap) - gap / 2;
  html << "  <line class=\"parity\" x1=\"" << parity_x << "\" x2=\"" << parity_x << "\" y1=\""
       << top << "\" y2=\"" << top + height << "\"/>\n</svg>\n";
}

}  // namespace

Status HtmlReporter::ReportRun(const RunModel& run) {
  std::ostringstream html;
  const std::string name = run.run_info.value("manifest_name", std::string("opverify run"));
  const RunTotals& totals = run.totals;
  html << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>opverify: "
       << MarkupEscape(name) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  html << "<h1>opverify: " << MarkupEscape(name) << "</h1>\n";
  html << "<p class=\"totals\" id=\"totals\">" << totals.operators << " operators, " << totals.cases
       << " cases: " << totals.passed << " passed, <span class=\""
       << (totals.failed > 0 ? "bad" : "") << "\">" << totals.failed << " failed</span></p>\n";
  if (totals.lost > 0) {
    html << "<div id=\"lost\"><p class=\"bad\">Not complete: " << totals.lost
         << " of this run's results are unreadable or missing; it is no pass.</p>\n<ul>\n";
    for (const auto* lines : {&run.problems, &run.incomplete}) {
      for (const std::string& line : *lines) html << "<li>" << MarkupEscape(line) << "</li>\n";
    }
    html << "</ul></div>\n";
  }
  html << "<p>Run folder <code>" << MarkupEscape(run.run_dir) << "</code>";
  if (run.run_info.contains("manifest")) {
    html << ", manifest <code>" << MarkupEscape(run.run_info["manifest"].get<std::string>())
         << "</code>";
  }
  html << ".";
  if (const std::string built = RunVersionLine(run.run_info); !built.empty())
    html << " Run by " << MarkupEscape(built) << ".";
  html << "</p>\n";
  if (const std::vector<std::string> stopped = StoppedEarlyLines(run); !stopped.empty()) {
    html << "<h2 id=\"stopped\">Stopped early</h2>\n<p class=\"bad\">"
         << MarkupEscape(stopped.front()) << "</p>\n";
    if (stopped.size() > 1) {
      html << "<ul>\n";
      for (std::size_t i = 1; i < stopped.size(); ++i)
        html << "<li>" << MarkupEscape(stopped[i]) << "</li>\n";
      html << "</ul>\n";
    }
  }

  // The grid: operators x dtypes.
  std::set<std::string> dtypes;
  for (const OperatorModel& op : run.operators) {
    for (const auto& [dtype, cell] : op.dtypes) dtypes.insert(dtype);
  }
  html << "<h2>Operators &times; dtypes</h2>\n<table class=\"grid\" "
          "id=\"grid\">\n<tr><th>operator</th>";
  for (const auto& dtype : dtypes) html << "<th>" << MarkupEscape(dtype) << "</th>";
  html << "<th>speedup</th></tr>\n";
  for (const OperatorModel& op : run.operators) {
    html << "<tr><th>" << MarkupEscape(op.name) << "</th>";
    for (const auto& dtype : dtypes) {
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
    html << "<td>" << (op.performance ? SpeedupText(op.performance->speedup) : "-")
         << "</td></tr>\n";
  }
  html << "</table>\n";

  // Performance.
  html << "<h2>Speedup distribution</h2>\n";
  const PerformanceModel& p = run.performance;
  std::vector<std::pair<double, std::string>> by_speed;
  std::vector<double> values;
  for (const OperatorSpeed& op : p.operators) {
    if (!op.speedup) continue;
    values.push_back(*op.speedup);
    by_speed.emplace_back(*op.speedup, op.name);
  }
  html << "<p id=\"geomean\">Geometric mean speedup over " << values.size()
       << " operators: " << SpeedupText(p.geomean_speedup) << ";";
  for (std::size_t i = 0; i < p.fast_p.size(); ++i) {
    html << (i == 0 ? " " : ", ") << "fast_" << p.fast_p[i].first << " "
         << Fixed(p.fast_p[i].second, 2);
  }
  html << ".</p>\n";
  SpeedupChart(html, values);
  for (const auto& r : p.review) html << "<p class=\"bad\">Review: " << MarkupEscape(r) << "</p>\n";
  std::sort(by_speed.begin(), by_speed.end());
  html << "<h2>Slowest operators</h2>\n<table "
          "id=\"slowest\">\n<tr><th>operator</th><th>speedup</th></tr>\n";
  for (std::size_t i = 0; i < by_speed.size() && i < 10; ++i) {
    html << "<tr><td>" << MarkupEscape(by_speed[i].second) << "</td><td>"
         << Fixed(by_speed[i].first, 2) << "x</td></tr>\n";
  }
  html << "</table>\n";

  html << LeastPreciseHtml(run);

  html << "<h2>Failures</h2>\n";
  if (run.failures.empty()) {
    html << "<p id=\"no-failures\">None.</p>\n";
  } else {
    html << "<table "
            "id=\"failures\">\n<tr><th>case</th><th>error</th><th>A/B</th><th>message</"
            "th><th>repro</th></tr>\n";
    for (const FailureRow& f : run.failures) {
      html << "<tr><td>" << MarkupEscape(f.case_id) << "</td><td>" << MarkupEscape(f.error_type)
           << "</td><td>"
           << (f.ab && f.ab->is_string() ? MarkupEscape(f.ab->get<std::string>()) : "-")
           << "</td><td><pre>" << MarkupEscape(f.message) << "</pre></td><td><code>"
           << MarkupEscape(f.repro) << "</code></td></tr>\n";
    }
    html << "</table>\n";
    bool suspects = false;
    for (const FailureRow& f : run.failures) suspects |= f.reference_suspect();
    if (suspects) {
      html << "<h2>Reference suspects</h2>\n<p>Failed against the CPU golden, but the reference is "
              "the suspect: "
              "the verdict stays failed, and <code>opverify-reduce --baseline</code> does not "
              "count them as "
              "regressions.</p>\n<table id=\"reference-suspects\">\n<tr><th>case</th><th>float64 "
              "golden</th>"
              "<th>torch's device run vs CPU golden</th><th>why</th></tr>\n";
      for (const FailureRow& f : run.failures) {
        if (!f.reference_suspect()) continue;
        const nlohmann::json& t = f.reference_trust;
        const nlohmann::json none;
        html << "<tr><td>" << MarkupEscape(f.case_id) << "</td><td>"
             << MarkupEscape(TrustJudgementLine(t.is_object() ? t.value("fp64", none) : none))
             << "</td><td>"
             << MarkupEscape(
                    TrustJudgementLine(t.is_object() ? t.value("device_reference", none) : none))
             << "</td><td>" << MarkupEscape(t.is_object() ? t.value("reason", "") : "")
             << "</td></tr>\n";
      }
      html << "</table>\n";
    }
  }
  html << "</body>\n</html>\n";

  return WriteReportFile((std::filesystem::path(context().run_dir) / "report.html").string(),
                         html.str());
}

}  // namespace opverify
