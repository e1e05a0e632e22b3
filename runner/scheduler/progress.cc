#include "runner/scheduler/progress.h"

#include "runner/common/strings.h"

namespace opverify {

Progress::Progress(int total_items, bool terminal, double plain_interval_s, std::FILE* out)
    : total_items_(total_items),
      terminal_(terminal),
      interval_s_(terminal ? 0.2 : plain_interval_s),
      out_(out),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void Progress::CaseDone(const nlohmann::json& summary) {
  if (summary.value("kind", "") == "item") {
    item_ms_ += summary.value("item_ms", 0.0);
    return;
  }
  if (summary.value("kind", "") == "bench") {
    bench_ms_ += summary.value("bench_ms", 0.0);
    shapes_benched_ += summary.value("shapes", 0);
    return;
  }
  (summary.value("passed", false) ? passed_ : failed_)++;
  case_ms_ += summary.value("wall_ms", 0.0);
  store_ms_ += summary.value("store_ms", 0.0);
  ab_ms_ += summary.value("ab_ms", 0.0);
  Tick();
}

double Progress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::ItemDone() {
  ++items_done_;
  Tick();
}

std::string Progress::Line() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int done = passed_ + failed_;
  const double rate = elapsed > 0 ? done / elapsed : 0;
  std::string eta = "?";
  if (items_done_ > 0 && items_done_ < total_items_) {
    const double remaining = elapsed / items_done_ * (total_items_ - items_done_);
    eta = Printf("%d:%02d", static_cast<int>(remaining) / 60, static_cast<int>(remaining) % 60);
  } else if (items_done_ >= total_items_) {
    eta = "0:00";
  }
  return Printf("[%d/%d work items] %d cases done, %d passed, %d failed, %.1f cases/s, ETA %s", items_done_,
                total_items_, done, passed_, failed_, rate, eta.c_str());
}

void Progress::Tick() {
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_draw_).count() < interval_s_) return;
  last_draw_ = now;
  if (terminal_) {
    std::fprintf(out_, "\r\033[K%s", Line().c_str());
  } else {
    std::fprintf(out_, "%s\n", Line().c_str());
  }
  std::fflush(out_);
}

void Progress::Finish() {
  std::fprintf(out_, terminal_ ? "\r\033[K%s\n" : "%s\n", Line().c_str());
  std::fflush(out_);
}

}  // namespace opverify
