#include "reduce/precision_margin.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <utility>

#include "reduce/text_escape.h"
#include "runner/common/strings.h"
#include "runner/judge/standards.h"

namespace opverify {
namespace {

using nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();

// The closer of two candidates (a NaN measure counts as failed: infinite).
void Keep(OutputMargin* best, double measured, double allowed, const std::string& name) {
  double ratio = allowed > 0 ? measured / allowed : (measured > 0 ? kInf : 0);
  if (std::isnan(ratio)) ratio = kInf;
  if (!best->check.empty() && ratio <= best->ratio) return;
  best->ratio = ratio;
  best->check = Printf("%s %.3g / %.3g", name.c_str(), measured, allowed);
}

// A check that allows no element at all (eco's hard limit, NPU Benchmark's
// cap): `count` over it fails the output, which counts as the threshold
// itself (1), so the share checks still rank failed outputs among themselves.
void KeepNoneAllowed(OutputMargin* best, double count, const char* what) {
  if (!(count > 0) || (!best->check.empty() && best->ratio >= 1)) return;
  best->ratio = 1;
  best->check = Printf("%.0f %s", count, what);
}

// eco: the share of elements outside atol + rtol*|G| against the 1% allowed;
// an element over the hard limit fails it.
bool EcoMargin(const OutputFigures& metrics, OutputMargin* out) {
  if (!metrics.eco) return false;
  const EcoFigures& eco = *metrics.eco;
  Keep(out, 1 - eco.matched_ratio.value, 1 - kEcoRequiredMatchedRatio, "mismatched share");
  KeepNoneAllowed(out, eco.over_count.value, "elements over the hard limit");
  return true;
}

// npu_benchmark: MERE against rel, the mismatched share against the 10%
// allowed; a cap violation fails it.
bool NpuMargin(const OutputFigures& metrics, OutputMargin* out) {
  if (!metrics.npu_benchmark) return false;
  const NpuFigures& npu = *metrics.npu_benchmark;
  Keep(out, npu.mere.value, npu.rel_threshold.value, "MERE");
  Keep(out, 1 - npu.matched_ratio.value, 1 - kNpuRequiredMatchedRatio, "mismatched share");
  KeepNoneAllowed(out, npu.max_error_cap_violation_count.value, "elements over the error cap");
  return true;
}

// mere_mare: MERE against T, MARE against 10 T.
bool MereMareMargin(const OutputFigures& metrics, OutputMargin* out) {
  if (!metrics.mere_mare) return false;
  const MereMareFigures& mm = *metrics.mere_mare;
  const double t = mm.threshold.value;
  Keep(out, mm.mere.value, t, "MERE");
  Keep(out, mm.mare.value, 10 * t, "MARE");
  return true;
}

}  // namespace

std::optional<OutputMargin> MarginOf(const OutputVerdict& verdict) {
  if (!verdict.route || !verdict.metrics) return std::nullopt;
  const OutputFigures& metrics = *verdict.metrics;
  OutputMargin margin;
  margin.route = *verdict.route;
  margin.passed = verdict.passed;
  bool known = false;
  if (margin.route == "eco") {
    known = EcoMargin(metrics, &margin);
  } else if (margin.route == "npu_benchmark") {
    known = NpuMargin(metrics, &margin);
  } else if (margin.route == "mere_mare") {
    known = MereMareMargin(metrics, &margin);
  } else if (margin.route == "strict") {
    // The eco routing's own route (eco, else NPU Benchmark) and MERE/MARE.
    known = (EcoMargin(metrics, &margin) || NpuMargin(metrics, &margin)) &&
            MereMareMargin(metrics, &margin);
  } else if (margin.route == "quant") {
    Keep(&margin, metrics.max_abs_diff.value, 1, "max |diff|");
    known = true;
  }
  if (!known) return std::nullopt;
  return margin;
}

std::vector<LeastPreciseRow> LeastPrecise(const RunModel& run, std::size_t per_route) {
  // route -> operator -> its closest output there.
  std::map<std::string, std::map<std::string, LeastPreciseRow>> closest;
  for (const OperatorModel& op : run.operators) {
    for (const CaseModel& c : op.cases) {
      for (const OutputVerdict& output : c.content.outputs) {
        std::optional<OutputMargin> margin = MarginOf(output);
        if (!margin) continue;
        auto [it, added] = closest[margin->route].try_emplace(op.name);
        if (added || margin->ratio > it->second.margin.ratio) {
          it->second = {op.name, c.case_id, *std::move(margin)};
        }
      }
    }
  }
  std::vector<LeastPreciseRow> rows;
  for (auto& [route, ops] : closest) {
    std::vector<LeastPreciseRow> ranked;
    for (auto& [name, row] : ops) ranked.push_back(std::move(row));
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const LeastPreciseRow& a, const LeastPreciseRow& b) {
                       return a.margin.ratio > b.margin.ratio;
                     });
    if (ranked.size() > per_route) ranked.resize(per_route);
    for (LeastPreciseRow& row : ranked) rows.push_back(std::move(row));
  }
  return rows;
}

std::string LeastPreciseHtml(const RunModel& run) {
  std::ostringstream html;
  html << "<h2>Least precise operators</h2>\n<p>Per judge route, the operators whose closest "
          "output came nearest its route's threshold: measured / allowed of the check that came "
          "closest (1 is the threshold; failed outputs in red). Routes are not compared "
          "with each other; bitwise and exact outputs have nothing to rank.</p>\n"
       << "<table id=\"least-precise\">\n<tr><th>route</th><th>operator</th><th>case</th>"
          "<th>of threshold</th><th>check</th></tr>\n";
  for (const LeastPreciseRow& row : LeastPrecise(run, 10)) {
    html << "<tr data-route=\"" << MarkupEscape(row.margin.route) << "\"><td>"
         << MarkupEscape(row.margin.route) << "</td><td>" << MarkupEscape(row.op) << "</td><td>"
         << MarkupEscape(row.case_id) << "</td><td" << (row.margin.passed ? "" : " class=\"bad\"")
         << ">" << Printf("%.3g", row.margin.ratio) << "</td><td>" << MarkupEscape(row.margin.check)
         << "</td></tr>\n";
  }
  html << "</table>\n";
  return html.str();
}

}  // namespace opverify
