// report.html's timeline: one row per rank, one bar per work item from when
// rank 0 handed it out to when its rank reported it done, split into its
// phases (summary.json's "timeline", written by opverify-batch). Inline SVG,
// no script: a bar's <title> names the item and its times.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "reduce/html_page.h"
#include "reduce/text_escape.h"

namespace opverify::html {
namespace {

using nlohmann::json;

constexpr double kPlotWidth = 1000;  // px for the run's wall time
constexpr int kLabelWidth = 64;      // px for "rank 12"
constexpr int kRowHeight = 14;
constexpr int kRowGap = 4;
constexpr int kTop = 4;

// The phases drawn, in bar order: the summary's key, its class and legend word.
struct Phase {
  const char* key;
  const char* css;
  const char* label;
};
constexpr Phase kPhases[] = {{"startup_s", "tl-startup", "start-up"},
                             {"compile_s", "tl-compile", "compile"},
                             {"cases_s", "tl-cases", "cases"},
                             {"ab_s", "tl-ab", "A/B"},
                             {"bench_s", "tl-bench", "benchmark"},
                             {"stopped_s", "tl-stopped", "cut short"}};

double Number(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string Px(double value) { return Fixed(std::round(value * 10) / 10, 1); }

// "softmax (chunk 2 of 5) on rank 3: 12.0-15.5 s; start-up 1.0 s, cases 2.5 s".
std::string ItemTitle(const json& item, int rank, double start, double end) {
  const auto op = item.find("op");
  std::string title = op != item.end() && op->is_string() ? op->get<std::string>() : "?";
  const int chunks =
      item.contains("chunks") && item["chunks"].is_number_integer() ? item["chunks"].get<int>() : 1;
  if (chunks > 1)
    title += " (chunk " + std::to_string(static_cast<int>(Number(item, "chunk")) + 1) + " of " +
             std::to_string(chunks) + ")";
  title += " on rank " + std::to_string(rank) + ": " + Fixed(start, 1) + "-" + Fixed(end, 1) + " s";
  std::string parts;
  for (const Phase& phase : kPhases) {
    const double s = Number(item, phase.key);
    if (s >= 0.05)
      parts += (parts.empty() ? "; " : ", ") + std::string(phase.label) + " " + Fixed(s, 1) + " s";
  }
  return title + parts;
}

// One item's bar: its phases side by side, scaled to its span (the span
// also holds the messages to and from rank 0); one plain bar without phases.
void ItemBar(std::ostringstream& svg, const json& item, double x, double width, int y) {
  double phased = 0;
  for (const Phase& phase : kPhases) phased += Number(item, phase.key);
  if (phased <= 0 || width < 2) {
    svg << "<rect class=\"tl-cases\" x=\"" << Px(x) << "\" y=\"" << y << "\" width=\""
        << Px(std::max(width, 0.5)) << "\" height=\"" << kRowHeight << "\"/>";
    return;
  }
  for (const Phase& phase : kPhases) {
    const double w = width * Number(item, phase.key) / phased;
    if (w < 0.3) continue;
    svg << "<rect class=\"" << phase.css << "\" x=\"" << Px(x) << "\" y=\"" << y << "\" width=\""
        << Px(w) << "\" height=\"" << kRowHeight << "\"/>";
    x += w;
  }
}

}  // namespace

void Timeline(std::ostringstream& html, const RunModel& run) {
  const auto found = run.run_info.find("timeline");
  if (found == run.run_info.end() || !found->is_object()) return;
  const json& timeline = *found;
  const auto listed = timeline.find("items");
  const json items = listed != timeline.end() ? *listed : json::array();
  const int ranks = std::clamp(static_cast<int>(Number(timeline, "ranks")), 1, 100000);
  const double wall_s = Number(timeline, "wall_s");
  if (!items.is_array() || items.empty() || !(wall_s > 0)) return;
  const double scale = kPlotWidth / wall_s;
  std::vector<double> busy_s(static_cast<std::size_t>(ranks), 0.0);
  std::ostringstream bars;
  for (const json& item : items) {
    if (!item.is_object()) continue;
    const int rank = static_cast<int>(Number(item, "rank"));
    if (rank < 0 || rank >= ranks) continue;
    const double start = std::clamp(Number(item, "start_s"), 0.0, wall_s);
    const double end = std::clamp(Number(item, "end_s"), start, wall_s);
    busy_s[static_cast<std::size_t>(rank)] += end - start;
    bars << "<g><title>" << MarkupEscape(ItemTitle(item, rank, start, end)) << "</title>";
    ItemBar(bars, item, kLabelWidth + start * scale, (end - start) * scale,
            kTop + rank * (kRowHeight + kRowGap));
    bars << "</g>\n";
  }
  const int height = kTop + ranks * (kRowHeight + kRowGap) + 16;
  const int width = kLabelWidth + static_cast<int>(kPlotWidth) + 70;
  html << "<section id=\"timeline\"><h2>Timeline</h2>\n<p class=\"note\">Each rank's work items "
          "over the run's "
       << Fixed(wall_s, 1)
       << " s, from when rank 0 handed one out to when it was done; a bar's "
          "phases are in proportion, not in time order. Legend:";
  for (const Phase& phase : kPhases)
    html << " <svg width=\"10\" height=\"10\"><rect class=\"" << phase.css
         << "\" width=\"10\" height=\"10\"/></svg> " << phase.label;
  html << ".</p>\n<svg class=\"timeline\" width=\"" << width << "\" height=\"" << height
       << "\" viewBox=\"0 0 " << width << " " << height
       << "\" role=\"img\" aria-label=\"work items by rank over time\">\n";
  for (int rank = 0; rank < ranks; ++rank) {
    const int y = kTop + rank * (kRowHeight + kRowGap);
    const double idle = 1 - busy_s[static_cast<std::size_t>(rank)] / wall_s;
    html << "<text x=\"0\" y=\"" << y + kRowHeight - 3 << "\">rank " << rank << "</text>"
         << "<rect class=\"tl-row\" x=\"" << kLabelWidth << "\" y=\"" << y << "\" width=\""
         << kPlotWidth << "\" height=\"" << kRowHeight << "\"/>"
         << "<text x=\"" << kLabelWidth + kPlotWidth + 6 << "\" y=\"" << y + kRowHeight - 3
         << "\">idle " << Fixed(100 * std::max(0.0, idle), 0) << "%</text>\n";
  }
  html << bars.str();
  html << "<text x=\"" << kLabelWidth << "\" y=\"" << height - 2 << "\">0 s</text><text x=\""
       << kLabelWidth + kPlotWidth << "\" y=\"" << height - 2 << "\" text-anchor=\"end\">"
       << Fixed(wall_s, 1) << " s</text>\n</svg></section>\n";
}

}  // namespace opverify::html
