#include "reduce/html_reporter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "reduce/html_page.h"
#include "reduce/precision_margin.h"
#include "reduce/report_extras.h"
#include "reduce/report_file.h"
#include "reduce/skipped_cases.h"
#include "reduce/text_escape.h"
#include "runner/common/sha256.h"

namespace opverify {
namespace {

using html::Fixed;
using html::SpeedupText;

constexpr const char* kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 1em 2em; color: #222; }
h1 { font-size: 1.4em; margin: 0.2em 0; } h2 { font-size: 1.15em; margin: 1.2em 0 0.4em; }
.first h2 { margin-top: 0.4em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
td.pass { background: #d9f2d9; } td.fail { background: #f8d0d0; } td.none { background: #f4f4f4; color: #999; }
pre { white-space: pre-wrap; word-break: break-word; max-width: 60em; margin: 0; font-size: 0.85em; }
code { font-size: 0.85em; word-break: break-all; }
.totals { font-size: 1.1em; margin: 0.3em 0; } .bad { color: #b00; font-weight: bold; } .good { color: #070; }
.note { color: #555; font-size: 0.9em; }
.first { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 1.5em; }
.first table { font-size: 0.9em; } .msg { color: #555; font-size: 0.85em; word-break: break-word; }
table.env th { white-space: nowrap; } ul.diff { padding-left: 1.2em; margin: 0.3em 0; }
details.group { margin: 0.3em 0; } summary { cursor: pointer; }
details.group, table#failures { content-visibility: auto; contain-intrinsic-size: auto 2em; }
table.grid { font-size: 0.9em; } tbody.failing > tr > th { color: #b00; }
tr.case td { font-size: 0.85em; color: #444; padding-left: 2em; word-break: break-word; }
tr.waived td, a.waived { color: #8a5a00; }
[hidden] { display: none !important; }
svg text { font-size: 11px; fill: #333; } rect.bar { fill: #4a7fc1; } line.parity { stroke: #b00; }
svg.timeline { max-width: 100%; height: auto; } rect.tl-row { fill: #f4f4f4; }
.tl-startup { fill: #9a9a9a; } .tl-compile { fill: #e0a030; } .tl-cases { fill: #4a7fc1; }
.tl-ab { fill: #c04040; } .tl-bench { fill: #50a050; } .tl-stopped { fill: #d8c8e8; }
svg.spark polyline { fill: none; stroke: #4a7fc1; stroke-width: 1.2; } svg.spark circle { fill: #b00; }
)";

// The filter: each operator's <tbody> is hidden unless its data-k holds the
// typed text; a group with no operator left is hidden, one with some opened.
constexpr const char* kScript = R"(
(function () {
  var input = document.getElementById('filter');
  if (!input) return;
  var ops = document.querySelectorAll('tbody.op');
  var groups = document.querySelectorAll('details.group');
  var count = document.getElementById('filter-count');
  function apply() {
    var q = input.value.trim().toLowerCase(), shown = 0;
    for (var i = 0; i < ops.length; i++) {
      var hit = !q || ops[i].getAttribute('data-k').indexOf(q) >= 0;
      ops[i].hidden = !hit;
      if (hit) shown++;
    }
    for (var j = 0; j < groups.length; j++) {
      var any = !q || groups[j].querySelector('tbody.op:not([hidden])') !== null;
      groups[j].hidden = !any;
      if (q && any) groups[j].open = true;
    }
    count.textContent = q ? shown + ' of ' + ops.length + ' operators' : '';
  }
  var timer = 0;
  input.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(apply, 60); });
  if (input.value) apply();
})();
)";

// The script's hash (base64 SHA-256) for the page's Content-Security-Policy:
// the browser runs this script and no other, whatever a report might hold.
std::string ScriptHash() {
  const std::string hex = Sha256Hex(kScript, std::strlen(kScript));
  std::string bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  static const char* kDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const auto at = [&](std::size_t k) {
      return k < bytes.size() ? static_cast<unsigned>(static_cast<unsigned char>(bytes[k])) : 0u;
    };
    const unsigned n = at(i) << 16 | at(i + 1) << 8 | at(i + 2);
    out += kDigits[n >> 18 & 63];
    out += kDigits[n >> 12 & 63];
    out += i + 1 < bytes.size() ? kDigits[n >> 6 & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[n & 63] : '=';
  }
  return out;
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

void Warnings(std::ostringstream& html, const RunModel& run) {
  const RunTotals& totals = run.totals;
  if (totals.lost > 0) {
    // The first lines, the rest folded: a long list must not push the failures off the first
    // screen.
    constexpr std::size_t kShown = 5;
    html << "<div id=\"lost\"><p class=\"bad\">Not complete: " << totals.lost
         << " of this run's results are unreadable or missing; it is no pass.</p>\n<ul>\n";
    std::size_t shown = 0;
    const std::size_t all = run.problems.size() + run.incomplete.size();
    for (const auto* lines : {&run.problems, &run.incomplete}) {
      for (const std::string& line : *lines) {
        if (shown++ == kShown)
          html << "</ul>\n<details><summary>" << all - kShown << " more</summary><ul>\n";
        html << "<li>" << MarkupEscape(line) << "</li>\n";
      }
    }
    html << "</ul>" << (all > kShown ? "</details>" : "") << "</div>\n";
  }
  if (const std::vector<std::string> stopped = StoppedEarlyLines(run); !stopped.empty()) {
    html << "<div id=\"stopped\"><p class=\"bad\">Stopped early: " << MarkupEscape(stopped.front())
         << "</p>\n";
    if (stopped.size() > 1) {
      html << "<details><summary>" << stopped.size() - 1 << " more lines</summary><ul>\n";
      for (std::size_t i = 1; i < stopped.size(); ++i)
        html << "<li>" << MarkupEscape(stopped[i]) << "</li>\n";
      html << "</ul></details>\n";
    }
    html << "</div>\n";
  }
}

void Performance(std::ostringstream& html, const RunModel& run) {
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
}

// The "least precise" ranking, a section of its own (precision_margin.h).
void LeastPrecise(std::ostringstream& html, const RunModel& run) { html << LeastPreciseHtml(run); }

// Every failure with its message and repro command, then the reference suspects.
void Failures(std::ostringstream& html, const RunModel& run) {
  constexpr std::size_t kRows = 1000;  // the rest are in summary.json and junit.xml
  html << "<h2 id=\"failures-in-full\">Failures in full</h2>\n";
  if (run.failures.empty()) {
    html << "<p>None.</p>\n";
    return;
  }
  html << "<table id=\"failures\">\n<tr><th>case</th><th>error</th><th>A/B</th><th>message</th>"
          "<th>repro</th></tr>\n";
  for (std::size_t i = 0; i < run.failures.size() && i < kRows; ++i) {
    const FailureRow& f = run.failures[i];
    html << "<tr><td>" << MarkupEscape(f.case_id) << "</td><td>"
         << MarkupEscape(f.error_type.text()) << "</td><td>" << MarkupEscape(f.AbText())
         << "</td><td><pre>" << MarkupEscape(f.message) << "</pre></td><td><code>"
         << MarkupEscape(f.repro) << "</code></td></tr>\n";
  }
  html << "</table>\n";
  if (run.failures.size() > kRows) {
    html << "<p class=\"note\">and " << run.failures.size() - kRows
         << " more failures: summary.json and junit.xml list every one.</p>\n";
  }
  bool suspects = false;
  for (const FailureRow& f : run.failures) suspects |= f.reference_suspect();
  if (!suspects) return;
  html << "<h2>Reference suspects</h2>\n<p>Failed against the CPU golden, but the reference is "
          "the suspect: the verdict stays failed, and <code>opverify-reduce --baseline</code> "
          "does not count them as regressions.</p>\n<table id=\"reference-suspects\">\n"
          "<tr><th>case</th><th>float64 golden</th><th>torch's device run vs CPU golden</th>"
          "<th>why</th></tr>\n";
  for (const FailureRow& f : run.failures) {
    if (!f.reference_suspect()) continue;
    const ReferenceTrust* t = f.Trust();
    html << "<tr><td>" << MarkupEscape(f.case_id) << "</td><td>"
         << MarkupEscape(TrustJudgementLine(t ? t->fp64 : std::nullopt)) << "</td><td>"
         << MarkupEscape(TrustJudgementLine(t ? t->device_reference : std::nullopt)) << "</td><td>"
         << MarkupEscape(t ? t->reason : "") << "</td></tr>\n";
  }
  html << "</table>\n";
}

}  // namespace

Status HtmlReporter::ReportRun(const RunModel& run) {
  static const ReportExtras kNoExtras;
  const ReportExtras& extras = context().extras != nullptr ? *context().extras : kNoExtras;
  std::ostringstream html;
  const std::string name = run.info.manifest_name.value_or("opverify run");
  // No network, inline style, and of scripts only the page's own filter.
  html << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'; img-src data:; script-src 'sha256-"
       << ScriptHash() << "'\">\n<title>opverify: " << MarkupEscape(name) << "</title>\n<style>"
       << kStyle << "</style>\n</head>\n<body>\n";
  html << "<h1>opverify: " << MarkupEscape(name) << "</h1>\n";
  Warnings(html, run);
  html::FirstScreen(html, run, extras);
  html::OperatorGrid(html, run, extras);
  Performance(html, run);
  html::Timeline(html, run);
  LeastPrecise(html, run);
  Failures(html, run);
  html << "<script>" << kScript << "</script>\n</body>\n</html>\n";
  return WriteReportFile((std::filesystem::path(context().run_dir) / "report.html").string(),
                         html.str());
}

}  // namespace opverify
