#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iomanip>

#include "reduce/html_page.h"
#include "reduce/text_escape.h"

namespace opverify {

namespace html {

std::string Fixed(double value, int decimals) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(decimals) << value;
  return text.str();
}

std::string SpeedupText(const std::optional<double>& value) {
  return value ? Fixed(*value, 2) + "x" : "-";
}

std::string Milliseconds(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", ms);
  return text;
}

std::string OperatorAnchor(const std::string& name) { return "op-" + OperatorFolder(name); }

std::string OperatorFileLink(const std::string& name, const std::string& file) {
  // OperatorFolder's names are safe file names; anything outside the URL's
  // unreserved characters is still percent-encoded, so a link is never more than a path.
  std::string link = "ops/";
  for (const char c : OperatorFolder(name) + "/" + file) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '/' || c == '~') {
      link += c;
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", u);
      link += hex;
    }
  }
  return link;
}

std::string OperatorGroup(const std::string& name, const ReportExtras& extras) {
  if (const auto tags = extras.tags.find(name); tags != extras.tags.end() && !tags->second.empty())
    return tags->second.front();
  if (!extras.tags.empty()) return "(no tag)";
  std::size_t start = 0;
  while (start < name.size() && std::isdigit(static_cast<unsigned char>(name[start]))) ++start;
  if (start == 0 || start >= name.size() || name[start] != '_')
    start = 0;  // "19_ReLU"
  else
    ++start;
  const std::size_t end = name.find_first_of("_.-", start);
  const std::string family = name.substr(start, end == std::string::npos ? end : end - start);
  return family.empty() ? name : family;
}

std::string Sparkline(const std::vector<HistoryPoint>& history) {
  constexpr std::size_t kNights = 30;
  if (history.size() < 2) return "";
  const std::size_t first = history.size() > kNights ? history.size() - kNights : 0;
  double low = history[first].geomean_latency_ms, high = low;
  for (std::size_t i = first; i < history.size(); ++i) {
    low = std::min(low, history[i].geomean_latency_ms);
    high = std::max(high, history[i].geomean_latency_ms);
  }
  const double width = 80, height = 18, pad = 2;
  const std::size_t n = history.size() - first;
  std::string points;
  double x = 0, y = 0;
  for (std::size_t i = first; i < history.size(); ++i) {
    x = pad + (width - 2 * pad) * static_cast<double>(i - first) / static_cast<double>(n - 1);
    const double share = high > low ? (history[i].geomean_latency_ms - low) / (high - low) : 0.5;
    y = pad + (height - 2 * pad) * (1 - share);  // slower is higher
    points += (points.empty() ? "" : " ") + Fixed(x, 1) + "," + Fixed(y, 1);
  }
  const HistoryPoint& last = history.back();
  const std::string title = std::to_string(n) + " nights, " + history[first].date + " to " +
                            last.date + ": " + Milliseconds(low) + " to " + Milliseconds(high) +
                            " ms, last " + Milliseconds(last.geomean_latency_ms) + " ms (" +
                            last.commit + ")";
  return "<svg class=\"spark\" width=\"80\" height=\"18\" role=\"img\"><title>" +
         MarkupEscape(title) + "</title><polyline points=\"" + points + "\"/><circle cx=\"" +
         Fixed(x, 1) + "\" cy=\"" + Fixed(y, 1) + "\" r=\"1.8\"/></svg>";
}

}  // namespace html
}  // namespace opverify
