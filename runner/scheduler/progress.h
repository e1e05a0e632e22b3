// Rank 0's view of a running batch, and the console's voice during it:
// counts, failures so far, the operator each rank is on, elapsed time and
// what is left, as a live line on a terminal or as a plain line when
// something changed (at most every few seconds) otherwise; with `verbose`
// one line per finished case; with a JSONL stream one JSON object per
// finished case. Everything printed from a case (names, messages) is
// untrusted and goes through TerminalSafe or a JSON encoder.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/scheduler/rank_reports.h"

namespace opverify {

// What the progress knows of the run before it starts.
struct ProgressPlan {
  int items = 0;                      // the work items, ids 0..items-1
  std::vector<std::string> op_names;  // by WorkItem::op_index (missing: "item N" is shown)
  // By WorkItem::id: the cases the item is expected to run (its share of a
  // sweep, less what the selection or a resumed run leaves out); -1 when
  // not known until it is loaded (a task's own cases, generated edge cases).
  std::vector<int> item_cases;
};

struct ProgressOutput {
  enum class Style { kLine, kPlain, kNone };
  Style style = Style::kPlain;    // kLine: a live line (a terminal); kNone: no text progress
  double plain_interval_s = 5.0;  // kPlain: the most often a changed line is printed
  double heartbeat_s = 300.0;     // kPlain: an unchanged line is printed again this often
  std::size_t width = 0;          // kLine: the terminal's columns (0: no limit)
  bool verbose = false;           // one line per finished case
  std::FILE* out = stderr;        // the text
  std::FILE* jsonl = nullptr;     // one JSON object per finished case (null: none)
};

class Progress {
 public:
  Progress(ProgressPlan plan, ProgressOutput output);
  // The plan of `total_items` items of unknown size, kPlain or kLine.
  Progress(int total_items, bool terminal, double plain_interval_s = 5.0, std::FILE* out = stderr);
  // A worker's report (rank_reports.h): one case's summary, or an item's or
  // a benchmark's. `rank`: the worker's.
  void CaseDone(int rank, const nlohmann::json& report);
  void ItemStarted(int rank, int item_id, int op_index);  // handed to that worker
  void ItemDone(int rank);                                // that worker asked for more (or gave up)
  void Tick();                                            // redraw if due
  void Finish();                                          // the last line
  std::string Line() const;
  int cases() const { return passed_ + failed_; }
  // Sums over the case reports, in seconds: time in cases, in the store, in A/B re-runs.
  double case_s() const { return case_ms_ / 1e3; }
  double store_s() const { return store_ms_ / 1e3; }
  double ab_s() const { return ab_ms_ / 1e3; }
  double bench_s() const { return bench_ms_ / 1e3; }  // the performance phase, within item_s
  int shapes_benched() const { return shapes_benched_; }
  double item_s() const { return item_ms_ / 1e3; }
  // Within item_s: cases the run's stop cut short (run, not stored).
  double stopped_s() const { return stopped_ms_ / 1e3; }
  double elapsed_s() const;
  int failed() const { return failed_; }
  // Which item ran when on which rank, in the order handed out: one object
  // per item, {rank, item, op, start_s, end_s (seconds since the start, on
  // this rank's clock), and from the item's summary where it sent one:
  // startup_s, compile_s, cases_s, ab_s, store_s, bench_s, stopped_s, cases}.
  nlohmann::json Timeline() const;

 private:
  struct InFlight {
    int item_id = -1;
    int op_index = -1;
    int cases_done = 0;
  };
  // The cases the run is expected to hold once done; -1 while an unfinished item's count is
  // unknown.
  int ExpectedCases() const;
  std::string InFlightText() const;
  std::string StateText() const;  // the line without its clock
  void Draw(const std::string& line);
  void PrintAbove(const std::string& text);  // a whole line, the live line redrawn after it
  void WriteJsonl(int rank, const CaseSummary& summary);
  // A case of a chunked operator whose A/B ran in another chunk: that case's
  // class, when its line came first (the chain followed through the classes
  // already known). Every case with a class is remembered for later ones.
  void TakeInheritedClass(CaseSummary* summary);

  ProgressPlan plan_;
  ProgressOutput output_;
  std::map<std::string, std::string> ab_classes_;  // case id -> its A/B class, as heard
  int items_done_ = 0;
  int passed_ = 0;
  int failed_ = 0;
  double case_ms_ = 0, store_ms_ = 0, ab_ms_ = 0, item_ms_ = 0, bench_ms_ = 0;
  double stopped_ms_ = 0;
  int shapes_benched_ = 0;
  struct TimelineEntry {
    int rank = 0;
    int item_id = -1;
    int op_index = -1;
    double start_s = 0;
    double end_s = -1;                                 // -1: still running
    std::optional<ItemSummary> phases = std::nullopt;  // the item's summary, where it sent one
  };
  // The rank's open timeline entry ends now, with `phases` where given.
  void EndTimelineEntry(int rank, const ItemSummary* phases);

  std::map<int, InFlight> in_flight_;       // rank -> its item
  std::vector<TimelineEntry> timeline_;
  std::map<int, std::size_t> open_entry_;   // rank -> its running item's timeline_ index
  std::map<int, int> finished_item_cases_;  // item id -> the cases it reported
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  std::string last_state_;  // kPlain: the last line printed, without its clock
  std::string last_line_;   // kLine: the live line on the screen ("" when none)
};

}  // namespace opverify
