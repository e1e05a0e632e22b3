#include "runner/scheduler/work_plan.h"

#include <fnmatch.h>

#include <algorithm>
#include <numeric>

#include "runner/common/strings.h"

namespace opverify {

std::optional<Shard> ParseShard(const std::string& text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  const std::optional<int> index = ParseDecimal(text.substr(0, slash));
  const std::optional<int> count = ParseDecimal(text.substr(slash + 1));
  if (!index || !count || *count < 1 || *index >= *count) return std::nullopt;
  return Shard{*index, *count};
}

bool InShard(int manifest_index, const Shard& shard) {
  return manifest_index % shard.count == shard.index;
}

std::vector<int> SelectOperators(const std::vector<std::string>& names, const std::string& filter,
                                 const std::optional<Shard>& shard) {
  std::vector<int> kept;
  for (int i = 0; i < static_cast<int>(names.size()); ++i) {
    if (shard && !InShard(i, *shard)) continue;
    if (filter.empty() || fnmatch(filter.c_str(), names[static_cast<std::size_t>(i)].c_str(), 0) == 0) {
      kept.push_back(i);
    }
  }
  return kept;
}

std::vector<WorkItem> PlanWork(const std::vector<OperatorShape>& ops,
                               const std::map<std::string, double>& previous_seconds, int max_cases_per_item) {
  double known_total = 0;
  int known_count = 0;
  for (const auto& op : ops) {
    if (auto it = previous_seconds.find(op.name); it != previous_seconds.end()) {
      known_total += it->second;
      ++known_count;
    }
  }
  const double fallback = known_count > 0 ? known_total / known_count : 0.0;

  std::vector<WorkItem> items;
  for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
    const OperatorShape& op = ops[static_cast<std::size_t>(i)];
    auto it = previous_seconds.find(op.name);
    const double op_seconds = it != previous_seconds.end() ? it->second : fallback;
    if (op.known_cases <= max_cases_per_item) {
      items.push_back({0, i, {}, op_seconds});
      continue;
    }
    for (int first = 0; first < op.known_cases; first += max_cases_per_item) {
      const int last = std::min(op.known_cases, first + max_cases_per_item);
      WorkItem item{0, i, std::vector<int>(static_cast<std::size_t>(last - first)), 0};
      std::iota(item.case_indices.begin(), item.case_indices.end(), first);
      item.expected_s = op_seconds * (last - first) / op.known_cases;
      items.push_back(std::move(item));
    }
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const WorkItem& a, const WorkItem& b) { return a.expected_s > b.expected_s; });
  for (int i = 0; i < static_cast<int>(items.size()); ++i) items[static_cast<std::size_t>(i)].id = i;
  return items;
}

}  // namespace opverify
