#include "reduce/baseline_diff.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "runner/common/user_file.h"

#include "reduce/run_model.h"

namespace fs = std::filesystem;

namespace opverify {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

Result<json> ReadJson(const fs::path& path) {
  const Result<std::string> text = ReadUserFile(path.string(), "report", 1u << 30);
  if (!text.ok()) {
    return text.status().code() == Status::Code::kNotFound
               ? Status::NotFound(path.string() + ": cannot read")
               : text.status();
  }
  json value = json::parse(text.value(), nullptr, false);
  if (value.is_discarded()) return Status::InvalidInput(path.string() + ": malformed JSON");
  return value;
}

// An operator's failures in a summary.json: any, and whether every one is a
// reference_suspect (a summary written before that class has none).
struct Failed {
  bool any = false;
  bool only_reference_suspect = false;
  bool real() const { return any && !only_reference_suspect; }
};

// Per operator of a summary.json: how its cases failed.
Result<std::map<std::string, Failed>> FailedByOperator(const fs::path& run_dir) {
  Result<json> summary = ReadJson(run_dir / "summary.json");
  if (!summary.ok()) return summary.status();
  const json& root = summary.value();
  if (!root.contains("operators") || !root["operators"].is_array()) {
    return Status::InvalidInput((run_dir / "summary.json").string() + ": no operators list");
  }
  std::map<std::string, Failed> failed;
  for (const auto& op : root["operators"]) {
    const int count = op.value("failed", 0);
    const int suspect =
        op.contains("reference_suspect") && op["reference_suspect"].is_number_integer()
            ? op["reference_suspect"].get<int>()
            : 0;
    failed[op.value("name", "")] = {count > 0, count > 0 && suspect >= count};
  }
  return failed;
}

// case_idx -> the implementation's timing, for the shapes measured with a
// spread (two repeats or more).
std::map<int, ShapeTiming> Timings(const fs::path& run_dir, const std::string& op) {
  std::map<int, ShapeTiming> out;
  Result<json> perf = ReadJson(run_dir / "ops" / OperatorFolder(op) / "perf_result.json");
  if (!perf.ok()) return out;
  for (const auto& shape : perf.value().value("per_shape_results", json::array())) {
    if (shape.value("status", "") != "pass") continue;
    const json impl = shape.value("implementation", json::object());
    if (!impl.contains("avg_latency_ms") || !impl["avg_latency_ms"].is_number()) continue;
    ShapeTiming t;
    t.median_ms = impl["avg_latency_ms"].get<double>();
    const json stats = impl.value("stats", json::object());
    if (!stats.is_object()) continue;
    if (stats.contains("stdev_ms") && stats["stdev_ms"].is_number())
      t.stdev_ms = stats["stdev_ms"].get<double>();
    if (stats.contains("repeats") && stats["repeats"].is_number_integer())
      t.repeats = stats["repeats"].get<int>();
    if (t.median_ms > 0 && std::isfinite(t.median_ms) && t.repeats >= 2)
      out[shape.value("case_idx", 0)] = t;
  }
  return out;
}

ordered_json SpeedJson(const std::vector<SpeedChange>& changes) {
  ordered_json out = ordered_json::array();
  for (const auto& c : changes) {
    out.push_back({{"op", c.op},
                   {"latency_ratio", c.ratio},
                   {"spread", c.spread},
                   {"noise_floor", c.noise_floor},
                   {"repeats", c.repeats},
                   {"shapes", c.shapes}});
  }
  return out;
}

}  // namespace

double StudentT99(int dof) {
  // Two-sided 99% (the 0.995 quantile); between rows, the next smaller dof's (wider).
  static const std::pair<int, double> kTable[] = {
      {1, 63.657}, {2, 9.925},  {3, 5.841},  {4, 4.604},  {5, 4.032},   {6, 3.707},
      {7, 3.499},  {8, 3.355},  {9, 3.250},  {10, 3.169}, {12, 3.055},  {15, 2.947},
      {20, 2.845}, {30, 2.750}, {40, 2.704}, {60, 2.660}, {120, 2.617}, {1000, 2.581}};
  double t = kTable[0].second;
  for (const auto& [row, value] : kTable) {
    if (row > dof) break;
    t = value;
  }
  return t;
}

std::optional<SpeedChange> CompareTimings(
    const std::string& op, const std::vector<std::pair<ShapeTiming, ShapeTiming>>& pairs) {
  if (pairs.empty()) return std::nullopt;
  double log_sum = 0, spread_sum = 0;
  int fewest = 0;
  for (const auto& [before, now] : pairs) {
    log_sum += std::log(now.median_ms / before.median_ms);
    spread_sum += std::hypot(before.stdev_ms / before.median_ms, now.stdev_ms / now.median_ms);
    const int repeats = std::min(before.repeats, now.repeats);
    fewest = fewest == 0 ? repeats : std::min(fewest, repeats);
  }
  const int n = static_cast<int>(pairs.size());
  SpeedChange change{op, std::exp(log_sum / n), spread_sum / n, n, fewest, 0};
  change.noise_floor = change.spread * StudentT99(2 * (fewest - 1));
  return change;
}

bool BeyondNoise(const SpeedChange& change, double threshold) {
  // On a log scale, so that 2x slower and 2x faster are the same size of change.
  const double size = std::fabs(std::log(change.ratio));
  return size > std::log1p(threshold) && size > std::log1p(change.noise_floor);
}

ordered_json BaselineDiff::ToJson() const {
  return {{"regressed", regressed()},
          {"newly_failing", newly_failing},
          {"fixed", fixed},
          {"slower", SpeedJson(slower)},
          {"faster", SpeedJson(faster)},
          {"added", added},
          {"missing", missing},
          {"allow_missing", allow_missing},
          {"reference_suspect", reference_suspect}};
}

Result<BaselineDiff> DiffRuns(const std::string& run_dir, const std::string& baseline_dir, double threshold) {
  Result<std::map<std::string, Failed>> now = FailedByOperator(run_dir);
  if (!now.ok()) return now.status();
  Result<std::map<std::string, Failed>> before = FailedByOperator(baseline_dir);
  if (!before.ok()) return before.status();
  BaselineDiff diff;
  for (const auto& [op, failed] : now.value()) {
    const auto old = before.value().find(op);
    if (old == before.value().end()) {
      diff.added.push_back(op);
      if (failed.any && failed.only_reference_suspect) diff.reference_suspect.push_back(op);
      continue;
    }
    // A regression is a real failure (one not classified reference_suspect) where there was none.
    if (failed.real() && !old->second.real()) diff.newly_failing.push_back(op);
    if (failed.any && failed.only_reference_suspect &&
        !(old->second.any && old->second.only_reference_suspect)) {
      diff.reference_suspect.push_back(op);
    }
    if (!failed.any && old->second.any) diff.fixed.push_back(op);
    if (failed.any || old->second.any) continue;
    const auto a = Timings(baseline_dir, op);
    const auto b = Timings(run_dir, op);
    std::vector<std::pair<ShapeTiming, ShapeTiming>> pairs;
    for (const auto& [index, t_new] : b) {
      if (const auto t_old = a.find(index); t_old != a.end())
        pairs.emplace_back(t_old->second, t_new);
    }
    const std::optional<SpeedChange> change = CompareTimings(op, pairs);
    if (change && BeyondNoise(*change, threshold))
      (change->ratio > 1 ? diff.slower : diff.faster).push_back(*change);
  }
  for (const auto& [op, failed] : before.value()) {
    if (now.value().count(op) == 0) diff.missing.push_back(op);
  }
  return diff;
}

}  // namespace opverify
