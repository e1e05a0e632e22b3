// Rank 0's view of a running batch: counts, rate and ETA, shown as a live
// line on a terminal, or as a plain line every few seconds otherwise.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace opverify {

class Progress {
 public:
  Progress(int total_items, bool terminal, double plain_interval_s = 5.0, std::FILE* out = stderr);
  void CaseDone(const nlohmann::json& summary);  // a worker's case (or item-end) report
  void ItemDone();
  void Tick();    // redraw if due
  void Finish();  // the last line
  std::string Line() const;
  int cases() const { return passed_ + failed_; }
  // Sums over the case reports, in seconds: time in cases, in the store, in A/B re-runs.
  double case_s() const { return case_ms_ / 1e3; }
  double store_s() const { return store_ms_ / 1e3; }
  double ab_s() const { return ab_ms_ / 1e3; }
  double bench_s() const { return bench_ms_ / 1e3; }  // the performance phase, within item_s
  int shapes_benched() const { return shapes_benched_; }
  double item_s() const { return item_ms_ / 1e3; }
  double elapsed_s() const;
  int failed() const { return failed_; }

 private:
  int total_items_;
  int items_done_ = 0;
  int passed_ = 0;
  int failed_ = 0;
  double case_ms_ = 0, store_ms_ = 0, ab_ms_ = 0, item_ms_ = 0, bench_ms_ = 0;
  int shapes_benched_ = 0;
  bool terminal_;
  double interval_s_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace opverify
