#include "runner/scheduler/progress.h"

#include <ctime>
#include <utility>

#include "runner/common/strings.h"
#include "runner/common/terminal_log.h"
#include "runner/common/terminal_text.h"
#include "runner/common/utf8.h"

namespace opverify {
namespace {

constexpr std::size_t kNameLimit = 60;      // an operator's name in the line
constexpr std::size_t kMessageLimit = 160;  // a failure's message in a -v line
constexpr std::size_t kInFlightShown = 4;   // groups of ranks named, then "+N more"

// "02:13" under an hour, else "1:10:02".
std::string Clock(double seconds) {
  const long s = seconds > 0 ? static_cast<long>(seconds) : 0;
  if (s < 3600) return Printf("%02ld:%02ld", s / 60, s % 60);
  return Printf("%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
}

// Now, in UTC, to the millisecond: "2026-12-01T23:05:01.123Z".
std::string UtcNow() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  return Printf("%s.%03dZ", stamp, static_cast<int>(ms));
}

}  // namespace

Progress::Progress(ProgressPlan plan, ProgressOutput output)
    : plan_(std::move(plan)),
      output_(output),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::Progress(int total_items, bool terminal, double plain_interval_s, std::FILE* out)
    : Progress(ProgressPlan{total_items, {}, {}}, [&] {
        ProgressOutput o;
        o.style = terminal ? ProgressOutput::Style::kLine : ProgressOutput::Style::kPlain;
        o.plain_interval_s = plain_interval_s;
        o.out = out;
        return o;
      }()) {}

void Progress::CaseDone(int rank, const nlohmann::json& report) {
  switch (RankReportKindOf(report)) {
    case RankReportKind::kItem: {
      const ItemSummary item = report.get<ItemSummary>();
      item_ms_ += item.item_ms;
      stopped_ms_ += item.stopped_ms;
      EndTimelineEntry(rank, &item);
      return;
    }
    case RankReportKind::kBench: {
      const BenchSummary bench = report.get<BenchSummary>();
      bench_ms_ += bench.bench_ms;
      shapes_benched_ += static_cast<int>(bench.shapes);
      return;
    }
    case RankReportKind::kCase:
    case RankReportKind::kUnknown:
      break;
  }
  CaseSummary summary = report.get<CaseSummary>();
  TakeInheritedClass(&summary);
  const bool passed = summary.passed;
  (passed ? passed_ : failed_)++;
  case_ms_ += summary.wall_ms;
  store_ms_ += summary.store_ms;
  ab_ms_ += summary.ab_ms;
  if (auto it = in_flight_.find(rank); it != in_flight_.end()) ++it->second.cases_done;
  if (output_.verbose) {
    const std::string id = TerminalLine(summary.case_id, 200);
    const std::string where = Printf("(rank %d, %.0f ms)", rank, summary.wall_ms);
    PrintAbove(passed ? (summary.waived ? "WAIVED " : "PASSED ") + id + " " + where
                      : "FAILED " + id + "  " + TerminalLine(summary.error_type, 60) +
                            (summary.ab ? " (" + TerminalLine(*summary.ab, 40) + ")" : "") + "  " +
                            TerminalLine(summary.message, kMessageLimit) + " " + where);
  }
  if (output_.jsonl != nullptr) WriteJsonl(rank, summary);
  Tick();
}

void Progress::TakeInheritedClass(CaseSummary* summary) {
  if (!summary->ab && !summary->ab_inherited_from.empty()) {
    const auto origin = ab_classes_.find(summary->ab_inherited_from);
    if (origin != ab_classes_.end()) summary->ab = origin->second;
  }
  if (summary->ab) ab_classes_[summary->case_id] = *summary->ab;
}

void Progress::WriteJsonl(int rank, const CaseSummary& summary) {
  using nlohmann::ordered_json;
  const bool passed = summary.passed;
  ordered_json line;
  line["case_id"] = summary.case_id;
  line["op"] = summary.op;
  line["index"] = summary.index ? ordered_json(*summary.index) : ordered_json(nullptr);
  line["dtype"] = summary.dtype.empty() ? ordered_json(nullptr) : ordered_json(summary.dtype);
  line["verdict"] = !passed ? "failed" : summary.waived ? "waived" : "passed";
  line["error_type"] = passed ? ordered_json(nullptr) : ordered_json(summary.error_type);
  line["message"] = passed ? ordered_json(nullptr) : ordered_json(summary.message);
  line["ab"] = summary.ab ? ordered_json(*summary.ab) : ordered_json(nullptr);
  if (!summary.ab_inherited_from.empty()) line["ab_inherited_from"] = summary.ab_inherited_from;
  line["wall_ms"] = summary.wall_ms;
  line["rank"] = rank;
  line["time"] = UtcNow();
  // Names and messages are untrusted: invalid UTF-8 becomes U+FFFD, and
  // control characters are \u-escaped, so every line is one valid object.
  const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::fprintf(output_.jsonl, "%s\n", text.c_str());
  std::fflush(output_.jsonl);
}

double Progress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::ItemStarted(int rank, int item_id, int op_index) {
  in_flight_[rank] = {item_id, op_index, 0};
  open_entry_[rank] = timeline_.size();
  timeline_.push_back({rank, item_id, op_index, elapsed_s()});
  Tick();
}

void Progress::EndTimelineEntry(int rank, const ItemSummary* phases) {
  const auto open = open_entry_.find(rank);
  if (open == open_entry_.end()) return;
  TimelineEntry& entry = timeline_[open->second];
  entry.end_s = elapsed_s();
  if (phases != nullptr) entry.phases = *phases;
  open_entry_.erase(open);
}

nlohmann::json Progress::Timeline() const {
  nlohmann::json items = nlohmann::json::array();
  for (const TimelineEntry& entry : timeline_) {
    const auto op = static_cast<std::size_t>(entry.op_index);
    nlohmann::json item = {
        {"rank", entry.rank},
        {"item", entry.item_id},
        {"op", entry.op_index >= 0 && op < plan_.op_names.size() ? plan_.op_names[op] : ""},
        {"start_s", entry.start_s},
        {"end_s", entry.end_s >= 0 ? entry.end_s : elapsed_s()}};
    if (const std::optional<ItemSummary>& p = entry.phases) {
      for (const auto& [phase, ms] : {std::pair<const char*, double>{"startup_s", p->startup_ms},
                                      {"compile_s", p->compile_ms},
                                      {"cases_s", p->cases_ms},
                                      {"ab_s", p->ab_ms},
                                      {"store_s", p->store_ms},
                                      {"bench_s", p->bench_ms},
                                      {"stopped_s", p->stopped_ms}}) {
        item[phase] = ms / 1e3;
      }
      item["cases"] = p->cases;
    }
    items.push_back(std::move(item));
  }
  return items;
}

void Progress::ItemDone(int rank) {
  EndTimelineEntry(rank, nullptr);
  if (auto it = in_flight_.find(rank); it != in_flight_.end()) {
    finished_item_cases_[it->second.item_id] = it->second.cases_done;
    in_flight_.erase(it);
  }
  ++items_done_;
  Tick();
}

int Progress::ExpectedCases() const {
  int total = 0;
  for (int id = 0; id < plan_.items; ++id) {
    if (auto done = finished_item_cases_.find(id); done != finished_item_cases_.end()) {
      total += done->second;
      continue;
    }
    const auto at = static_cast<std::size_t>(id);
    const int expected = at < plan_.item_cases.size() ? plan_.item_cases[at] : -1;
    if (expected < 0) return -1;
    total += expected;
  }
  return total;
}

// "rank 0: softmax, ranks 1,2: layer_norm": the operator each busy rank is on.
std::string Progress::InFlightText() const {
  std::vector<std::pair<std::string, std::string>> groups;  // name, its ranks
  for (const auto& [rank, flight] : in_flight_) {
    const auto op = static_cast<std::size_t>(flight.op_index);
    const std::string name = flight.op_index >= 0 && op < plan_.op_names.size()
                                 ? TerminalLine(plan_.op_names[op], kNameLimit)
                                 : Printf("item %d", flight.item_id);
    bool joined = false;
    for (auto& [group_name, ranks] : groups) {
      if (group_name != name) continue;
      ranks += "," + std::to_string(rank);
      joined = true;
    }
    if (!joined) groups.emplace_back(name, std::to_string(rank));
  }
  std::string text;
  for (std::size_t i = 0; i < groups.size() && i < kInFlightShown; ++i) {
    const auto& [name, ranks] = groups[i];
    text += (i ? ", " : "") +
            std::string(ranks.find(',') != std::string::npos ? "ranks " : "rank ") + ranks + ": " +
            name;
  }
  if (groups.size() > kInFlightShown) text += Printf(", +%zu more", groups.size() - kInFlightShown);
  return text;
}

std::string Progress::StateText() const {
  const int done = passed_ + failed_;
  const int expected = ExpectedCases();
  std::string text;
  if (expected > 0) {
    const int width = static_cast<int>(std::to_string(expected).size());
    text = Printf("[%*d/%d %5.1f%%]", width, done, expected,
                  done >= expected ? 100.0 : 100.0 * done / expected);
  } else {
    text = Printf("[%d cases, %d/%d items %5.1f%%]", done, items_done_, plan_.items,
                  plan_.items > 0 ? 100.0 * items_done_ / plan_.items : 100.0);
  }
  text += Printf(" %d failed", failed_);
  const std::string flying = InFlightText();
  if (!flying.empty()) text += " · " + flying;
  return text;
}

std::string Progress::Line() const {
  const double elapsed = elapsed_s();
  const int expected = ExpectedCases();
  const int done = passed_ + failed_;
  // The share done: of the cases where every item's count is known, else of the items.
  double share = -1;
  if (expected > 0) {
    share = static_cast<double>(done) / expected;
  } else if (plan_.items > 0) {
    share = static_cast<double>(items_done_) / plan_.items;
  }
  std::string line = StateText() + " · " + Clock(elapsed) + " elapsed";
  // A/B re-runs are part of the cases' time, so the estimate below counts
  // them; shown, as they can be most of a night of failures.
  if (ab_ms_ > 0) line += " (A/B " + Clock(ab_ms_ / 1e3) + ")";
  if (items_done_ >= plan_.items) {
    line += ", done";
  } else if (share > 0 && share < 1) {
    line += ", ~" + Clock(elapsed * (1 - share) / share) + " left";
  }
  return line;
}

void Progress::Draw(const std::string& line) {
  if (output_.style == ProgressOutput::Style::kLine) {
    // A live line wider than the terminal would wrap, and \r would then redraw only its end.
    const std::string shown = output_.width > 1 ? Utf8Prefix(line, output_.width - 1) : line;
    if (output_.out == stderr) {
      ShowLiveLine(shown);  // kept clear of the log messages stderr also shows
    } else {
      std::fprintf(output_.out, "\r\033[K%s", shown.c_str());
    }
    last_line_ = line;
  } else {
    std::fprintf(output_.out, "%s\n", line.c_str());
  }
  std::fflush(output_.out);
}

void Progress::PrintAbove(const std::string& text) {
  const bool live = output_.style == ProgressOutput::Style::kLine && !last_line_.empty();
  if (live && output_.out == stderr) {
    PrintAboveLiveLine(text);
    return;
  }
  std::fprintf(output_.out, live ? "\r\033[K%s\n" : "%s\n", text.c_str());
  if (live) Draw(Line());
  std::fflush(output_.out);
}

void Progress::Tick() {
  if (output_.style == ProgressOutput::Style::kNone) return;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_draw_).count();
  if (output_.style == ProgressOutput::Style::kLine) {
    if (since < 0.2) return;
    const std::string line = Line();
    if (line == last_line_) return;
    last_draw_ = now;
    Draw(line);
    return;
  }
  if (since < output_.plain_interval_s) return;
  const std::string state = StateText();
  if (state == last_state_ && since < output_.heartbeat_s) return;  // nothing new to say
  last_draw_ = now;
  last_state_ = state;
  Draw(Line());
}

void Progress::Finish() {
  if (output_.style == ProgressOutput::Style::kNone) return;
  Draw(Line());
  if (output_.style == ProgressOutput::Style::kLine) {
    if (output_.out == stderr) ClearLiveLine();
    std::fprintf(output_.out, "\n");
    std::fflush(output_.out);
    last_line_.clear();
  }
}

}  // namespace opverify
