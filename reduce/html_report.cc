#include "reduce/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <set>
#include <sstream>
#include <vector>

#include "reduce/report_file.h"
#include "reduce/text_escape.h"

namespace opverify {

using nlohmann::json;
using nlohmann::ordered_json;

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

std::string SpeedupText(const json& value) { return value.is_number() ? Fixed(value.get<double>(), 2) + "x" : "-"; }

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
  html << "<svg class=\"chart\" id=\"speedup-chart\" width=\"" << width << "\" height=\"" << height + top + bottom
       << "\" viewBox=\"0 0 " << width << " " << height + top + bottom << "\" role=\"img\" "
       << "aria-label=\"operators by speedup\">\n";
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const int k = first + static_cast<int>(i);
    const int x = gap + static_cast<int>(i) * (bar_w + gap);
    const int h = counts[i] * height / most;
    const std::string label = k == first ? "< " + Fixed(std::pow(2.0, k + 1), 2) + "x"
                              : k == last ? ">= " + Fixed(std::pow(2.0, k), 0) + "x"
                                          : Fixed(std::pow(2.0, k), k < 0 ? 2 : 0) + "-" +
                                                Fixed(std::pow(2.0, k + 1), k + 1 < 0 ? 2 : 0) + "x";
    if (counts[i] > 0) {
      html << "  <rect class=\"bar\" x=\"" << x << "\" y=\"" << top + height - h << "\" width=\"" << bar_w
           << "\" height=\"" << h << "\"><title>" << counts[i] << " operators, " << label << "</title></rect>\n";
      html << "  <text x=\"" << x + bar_w / 2 << "\" y=\"" << top + height - h - 4 << "\" text-anchor=\"middle\">"
           << counts[i] << "</text>\n";
    }
    html << "  <text x=\"" << x + bar_w / 2 << "\" y=\"" << top + height + 16 << "\" text-anchor=\"middle\">"
         << MarkupEscape(label) << "</text>\n";
  }
  // The parity line: between the bins below and above 1x.
  const int parity_x = gap + (0 - first) * (bar_w + gap) - gap / 2;
  html << "  <line class=\"parity\" x1=\"" << parity_x << "\" x2=\"" << parity_x << "\" y1=\"" << top << "\" y2=\""
       << top + height << "\"/>\n</svg>\n";
}

}  // namespace

Status WriteHtmlReport(const std::string& path, const ordered_json& summary,
                       const std::map<std::string, std::string>& repro) {
  std::ostringstream html;
  const std::string name = summary.value("manifest_name", std::string("opverify run"));
  const auto& totals = summary["totals"];
  html << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>opverify: "
       << MarkupEscape(name) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  html << "<h1>opverify: " << MarkupEscape(name) << "</h1>\n";
  html << "<p class=\"totals\" id=\"totals\">" << totals["operators"] << " operators, " << totals["cases"]
       << " cases: " << totals["passed"] << " passed, <span class=\"" << (totals["failed"] > 0 ? "bad" : "")
       << "\">" << totals["failed"] << " failed</span></p>\n";
  html << "<p>Run folder <code>" << MarkupEscape(summary.value("run_dir", "")) << "</code>";
  if (summary.contains("manifest")) html << ", manifest <code>" << MarkupEscape(summary["manifest"].get<std::string>()) << "</code>";
  html << ".</p>\n";

  // The grid: operators x dtypes.
  std::set<std::string> dtypes;
  for (const auto& op : summary["operators"]) {
    if (!op.contains("dtypes")) continue;
    for (const auto& [dtype, cell] : op["dtypes"].items()) dtypes.insert(dtype);
  }
  std::map<std::string, json> speedups;
  if (summary.contains("performance")) {
    for (const auto& op : summary["performance"]["operators"]) speedups[op.value("name", "")] = op["speedup"];
  }
  html << "<h2>Operators &times; dtypes</h2>\n<table class=\"grid\" id=\"grid\">\n<tr><th>operator</th>";
  for (const auto& dtype : dtypes) html << "<th>" << MarkupEscape(dtype) << "</th>";
  html << "<th>speedup</th></tr>\n";
  for (const auto& op : summary["operators"]) {
    const std::string op_name = op.value("name", "");
    html << "<tr><th>" << MarkupEscape(op_name) << "</th>";
    const auto grid = op.value("dtypes", ordered_json::object());
    for (const auto& dtype : dtypes) {
      if (!grid.contains(dtype)) {
        html << "<td class=\"none\"></td>";
        continue;
      }
      const int cases = grid[dtype].value("cases", 0), failed = grid[dtype].value("failed", 0);
      html << "<td class=\"" << (failed > 0 ? "fail" : "pass") << "\" title=\"" << failed << " of " << cases
           << " cases failed\">" << (failed > 0 ? "&#10007; " + std::to_string(failed) + "/" : "&#10003; ") << cases
           << "</td>";
    }
    html << "<td>" << (speedups.count(op_name) ? SpeedupText(speedups[op_name]) : "-") << "</td></tr>\n";
  }
  html << "</table>\n";

  // Performance.
  html << "<h2>Speedup distribution</h2>\n";
  std::vector<std::pair<double, std::string>> by_speed;
  if (summary.contains("performance")) {
    const auto& p = summary["performance"];
    std::vector<double> values;
    for (const auto& op : p["operators"]) {
      if (op["speedup"].is_number()) {
        values.push_back(op["speedup"].get<double>());
        by_speed.emplace_back(values.back(), op.value("name", ""));
      }
    }
    html << "<p id=\"geomean\">Geometric mean speedup over " << values.size() << " operators: "
         << SpeedupText(p["geomean_speedup"]) << "; fast_1.0 " << Fixed(p["fast_p"].value("1.0", 0.0), 2)
         << ", fast_1.5 " << Fixed(p["fast_p"].value("1.5", 0.0), 2) << ", fast_2.0 "
         << Fixed(p["fast_p"].value("2.0", 0.0), 2) << ".</p>\n";
    SpeedupChart(html, values);
    for (const auto& r : p["review"]) html << "<p class=\"bad\">Review: " << MarkupEscape(r.get<std::string>()) << "</p>\n";
  }
  std::sort(by_speed.begin(), by_speed.end());
  html << "<h2>Slowest operators</h2>\n<table id=\"slowest\">\n<tr><th>operator</th><th>speedup</th></tr>\n";
  for (std::size_t i = 0; i < by_speed.size() && i < 10; ++i) {
    html << "<tr><td>" << MarkupEscape(by_speed[i].second) << "</td><td>" << Fixed(by_speed[i].first, 2)
         << "x</td></tr>\n";
  }
  html << "</table>\n";

  std::vector<std::pair<double, std::string>> by_error;
  for (const auto& op : summary["operators"]) {
    if (op.contains("max_rel_diff") && op["max_rel_diff"].is_number()) {
      by_error.emplace_back(op["max_rel_diff"].get<double>(), op.value("name", ""));
    }
  }
  std::sort(by_error.rbegin(), by_error.rend());
  html << "<h2>Least precise operators</h2>\n<table id=\"least-precise\">\n"
       << "<tr><th>operator</th><th>largest relative difference</th></tr>\n";
  for (std::size_t i = 0; i < by_error.size() && i < 10; ++i) {
    char value[32];
    std::snprintf(value, sizeof value, "%.3g", by_error[i].first);
    html << "<tr><td>" << MarkupEscape(by_error[i].second) << "</td><td>" << value << "</td></tr>\n";
  }
  html << "</table>\n";

  html << "<h2>Failures</h2>\n";
  if (summary["failures"].empty()) {
    html << "<p id=\"no-failures\">None.</p>\n";
  } else {
    html << "<table id=\"failures\">\n<tr><th>case</th><th>error</th><th>A/B</th><th>message</th><th>repro</th></tr>\n";
    for (const auto& f : summary["failures"]) {
      const std::string op = f.value("op", "");
      const auto command = repro.find(op);
      html << "<tr><td>" << MarkupEscape(f.value("case_id", "")) << "</td><td>" << MarkupEscape(f.value("error_type", ""))
           << "</td><td>" << (f.contains("ab") && f["ab"].is_string() ? MarkupEscape(f["ab"].get<std::string>()) : "-")
           << "</td><td><pre>" << MarkupEscape(f.value("error_msg", "")) << "</pre></td><td><code>"
           << (command != repro.end() ? MarkupEscape(command->second) : "") << "</code></td></tr>\n";
    }
    html << "</table>\n";
  }
  html << "</body>\n</html>\n";

  return WriteReportFile(path, html.str());
}

}  // namespace opverify
