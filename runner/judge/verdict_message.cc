#include "runner/judge/verdict_message.h"

#include <string>
#include <vector>

#include "runner/common/strings.h"

namespace opverify::judge_internal {
namespace {

std::string Num(double v) { return Printf("%.6g", v); }

}  // namespace

std::string FirstAt(const std::vector<WorstElement>& worst) {
  if (worst.empty()) return "";
  const WorstElement& w = worst.front();
  return " (first at index " + std::to_string(w.index) + (w.part.empty() ? "" : " " + w.part) +
         ": golden " + Num(w.golden) + ", actual " + Num(w.actual) + ")";
}

std::string AccuracyMessage(Route route, const OutputMetrics& m) {
  std::vector<std::string> reasons;
  auto eco_reasons = [&] {
    const EcoMetrics& e = *m.eco;
    if (e.matched_count * 100 < m.total_finite * 99) {
      reasons.push_back("eco matched_ratio " + Num(e.matched_ratio) + " < 0.99 (" +
                        std::to_string(m.total_finite - e.matched_count) + " of " +
                        std::to_string(m.total_finite) + " elements outside atol + rtol*|golden|)");
    }
    if (e.over_count > 0) {
      reasons.push_back(
          "eco over_count " + std::to_string(e.over_count) +
          " > 0 (elements above max(max_abs_error_limit, 32*ULP, atol + rtol*|golden|))");
    }
  };
  auto npu_reasons = [&] {
    const NpuBenchmarkMetrics& n = m.npu_benchmark;
    if (!n.max_error_cap_passed) {
      reasons.push_back("npu_benchmark max_error_cap violated at " +
                        std::to_string(n.max_error_cap_violation_count) + " elements");
    }
    if (!n.matched_ratio_passed) {
      reasons.push_back("npu_benchmark matched_ratio " + Num(n.matched_ratio) + " < 0.9");
    }
    if (!n.mere_passed) {
      reasons.push_back("npu_benchmark MERE " + Num(n.mere) +
                        " >= " + Num(n.thresholds.rel_threshold));
    }
  };
  auto mm_reasons = [&] {
    const MereMareMetrics& mm = m.mere_mare;
    if (!(mm.mere < mm.threshold))
      reasons.push_back("MERE " + Num(mm.mere) + " >= " + Num(mm.threshold));
    if (!(mm.mare < kMareFactor * mm.threshold)) {
      reasons.push_back("MARE " + Num(mm.mare) + " >= " + Num(kMareFactor * mm.threshold));
    }
  };
  switch (route) {
    case Route::kEco:
      eco_reasons();
      break;
    case Route::kNpuBenchmark:
      npu_reasons();
      break;
    case Route::kMereMare:
      mm_reasons();
      break;
    case Route::kStrict:
      if (m.eco) {
        eco_reasons();
      } else {
        npu_reasons();
      }
      mm_reasons();
      break;
    case Route::kBitwise:
      reasons.push_back("raw bits differ at " + std::to_string(m.discrete->violation_count) +
                        " of " + std::to_string(m.total) + " elements");
      break;
    case Route::kExact:
      reasons.push_back(std::to_string(m.discrete->violation_count) + " of " +
                        std::to_string(m.total) + " elements differ (max |diff| " +
                        Num(m.max_abs_diff) + ")");
      break;
    case Route::kQuant:
      reasons.push_back(std::to_string(m.discrete->violation_count) + " of " +
                        std::to_string(m.total) + " elements differ by more than 1 (max |diff| " +
                        Num(m.max_abs_diff) + ")");
      break;
  }
  std::string out;
  for (const auto& r : reasons) out += (out.empty() ? "" : "; ") + r;
  return out;
}

bool RoutePassed(Route route, const OutputMetrics& m) {
  switch (route) {
    case Route::kEco:
      return m.eco && m.eco->passed;
    case Route::kNpuBenchmark:
      return m.npu_benchmark.passed;
    case Route::kMereMare:
      return m.mere_mare.passed;
    case Route::kStrict:
      return (m.eco ? m.eco->passed : m.npu_benchmark.passed) && m.mere_mare.passed;
    case Route::kBitwise:
    case Route::kExact:
    case Route::kQuant:
      return m.discrete && m.discrete->passed;
  }
  return false;
}

}  // namespace opverify::judge_internal
