#include "reduce/executor_starts.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>
#include <cmath>
#include <numeric>

namespace opverify {
namespace {

// The value at quantile q of `values` (nearest rank); values not empty.
double Quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)];
}

double Median(const std::vector<double>& values) {
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

double Rounded(double value) { return std::round(value * 10) / 10; }

struct ExecutorStarts {
  int executors = 0, from_spares = 0, preloaded = 0;
  std::vector<double> open_ms;                        // each operator's wait, in operator order
  std::map<std::string, std::vector<double>> own_ms;  // the executors' own split: part -> values
};

ExecutorStarts CollectExecutorStarts(const RunModel& run) {
  ExecutorStarts starts;
  for (const OperatorModel& op : run.operators) {
    const nlohmann::json& startup = op.facts.startup;
    if (!startup.is_object() || !startup.contains("open_ms") || !startup["open_ms"].is_number()) continue;
    ++starts.executors;
    starts.open_ms.push_back(startup["open_ms"].get<double>());
    if (startup.value("spare", false)) ++starts.from_spares;
    const nlohmann::json own = startup.value("executor", nlohmann::json::object());
    if (!own.is_object()) continue;
    if (own.contains("preloaded")) ++starts.preloaded;
    for (const auto& [part, value] : own.items()) {
      if (value.is_number()) starts.own_ms[part].push_back(value.get<double>());
    }
  }
  return starts;
}

}  // namespace

std::optional<nlohmann::ordered_json> ExecutorStartsJson(const RunModel& run) {
  const ExecutorStarts starts = CollectExecutorStarts(run);
  if (starts.executors == 0) return std::nullopt;
  const std::vector<double>& waits = starts.open_ms;
  nlohmann::ordered_json own = nlohmann::ordered_json::object();
  for (const auto& [part, values] : starts.own_ms) own[part] = Rounded(Median(values));
  return nlohmann::ordered_json{
      {"executors", starts.executors},
      {"from_spares", starts.from_spares},
      {"preloaded", starts.preloaded},
      {"open_ms",
       {{"median", Rounded(Median(waits))},
        {"p90", Rounded(Quantile(waits, 0.9))},
        {"max", Rounded(*std::max_element(waits.begin(), waits.end()))},
        {"total_s", std::round(std::accumulate(waits.begin(), waits.end(), 0.0)) / 1e3}}},
      {"own_ms_median", std::move(own)}};
}

}  // namespace opverify
