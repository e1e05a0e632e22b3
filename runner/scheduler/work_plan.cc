#include "runner/scheduler/work_plan.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "runner/common/strings.h"

namespace opverify {

std::optional<ManifestPart> ParseManifestPart(const std::string& text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  const std::optional<int> index = ParseDecimal(text.substr(0, slash));
  const std::optional<int> count = ParseDecimal(text.substr(slash + 1));
  if (!index || !count || *count < 1 || *index >= *count) return std::nullopt;
  return ManifestPart{*index, *count};
}

bool InManifestPart(int manifest_index, const ManifestPart& part) {
  return manifest_index % part.count == part.index;
}

std::vector<int> SelectOperators(const std::vector<std::string>& names, const std::string& filter,
                                 const std::optional<ManifestPart>& part) {
  std::vector<int> kept;
  for (int i = 0; i < static_cast<int>(names.size()); ++i) {
    if (part && !InManifestPart(i, *part)) continue;
    if (filter.empty() || fnmatch(filter.c_str(), names[static_cast<std::size_t>(i)].c_str(), 0) == 0) {
      kept.push_back(i);
    }
  }
  return kept;
}

std::optional<SchedulePolicy> ParseSchedulePolicy(const std::string& text) {
  if (text == "cost") return SchedulePolicy::kCost;
  if (text == "fifo") return SchedulePolicy::kFifo;
  return std::nullopt;
}

namespace {

// Bytes of one element of `dtype` ("float16", "torch.bfloat16", ...); 4 when unknown.
double ElementBytes(const std::string& dtype) {
  for (const auto& [suffix, bytes] :
       {std::pair{"64", 8.0}, {"16", 2.0}, {"8", 1.0}, {"bool", 1.0}}) {
    const std::size_t n = std::strlen(suffix);
    if (dtype.size() >= n && dtype.compare(dtype.size() - n, n, suffix) == 0) return bytes;
  }
  return 4.0;
}

// A parameter's elements: a shape's product, a size's value, else none.
double Elements(const nlohmann::json& value) {
  if (value.is_number_integer()) return std::max(0.0, value.get<double>());
  if (!value.is_array() || value.empty()) return 0;
  double product = 1;
  for (const auto& dim : value) {
    if (!dim.is_number_integer()) return 0;
    product *= std::max(0.0, dim.get<double>());
  }
  return product;
}

// The items of operator `index`: `chunks` consecutive runs of its cases
// (sizes differing by one at most), or one item of every case.
void AddChunks(int index, const OperatorShape& op, double seconds, int chunks,
               std::vector<WorkItem>* items) {
  if (chunks <= 1) {
    items->push_back({0, index, {}, seconds, 0, 1});
    return;
  }
  int first = 0;
  for (int k = 0; k < chunks; ++k) {
    const int size = op.known_cases / chunks + (k < op.known_cases % chunks ? 1 : 0);
    WorkItem item{0, index, std::vector<int>(static_cast<std::size_t>(size)), 0, k, chunks};
    std::iota(item.case_indices.begin(), item.case_indices.end(), first);
    item.expected_s = seconds * size / op.known_cases;
    items->push_back(std::move(item));
    first += size;
  }
}

// The plan before costs (kFifo): see PlanWork.
std::vector<WorkItem> PlanFifo(const std::vector<OperatorShape>& ops,
                               const std::map<std::string, double>& previous_seconds,
                               int max_cases_per_item) {
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
      items.push_back({0, i, {}, op_seconds, 0, 1});
      continue;
    }
    const int chunks = (op.known_cases + max_cases_per_item - 1) / max_cases_per_item;
    for (int k = 0; k < chunks; ++k) {
      const int first = k * max_cases_per_item;
      const int last = std::min(op.known_cases, first + max_cases_per_item);
      WorkItem item{0, i, std::vector<int>(static_cast<std::size_t>(last - first)), 0, k, chunks};
      std::iota(item.case_indices.begin(), item.case_indices.end(), first);
      item.expected_s = op_seconds * (last - first) / op.known_cases;
      items.push_back(std::move(item));
    }
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const WorkItem& a, const WorkItem& b) { return a.expected_s > b.expected_s; });
  return items;
}

// The cost-aware plan (kCost): see PlanWork.
std::vector<WorkItem> PlanByCost(const std::vector<OperatorShape>& ops,
                                 const std::map<std::string, double>& previous_seconds,
                                 const PlanSettings& settings) {
  const std::vector<double> cost = PredictCost(ops, previous_seconds);
  double total = 0;
  for (double c : cost) total += c;
  // Half a rank's fair share: chunks that small let the ranks end within about half a share.
  const double chunk_s = total / settings.ranks / 2;
  std::vector<WorkItem> items;
  std::vector<bool> known;  // by item: its operator has a previous time
  for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
    const auto at = static_cast<std::size_t>(i);
    const OperatorShape& op = ops[at];
    int chunks = (op.known_cases + settings.max_cases_per_item - 1) / settings.max_cases_per_item;
    // Over a rank's share, split. An operator no night has timed is split from half a share:
    // its cost is its case count times a guess, and a guess too low makes it the night's tail.
    const bool timed = previous_seconds.count(op.name) > 0;
    if (settings.ranks > 1 && chunk_s > 0 && cost[at] > (timed ? 2 : 1) * chunk_s)
      chunks = std::max(chunks, static_cast<int>(std::ceil(cost[at] / chunk_s)));
    chunks = std::min(chunks, op.known_cases);
    AddChunks(i, op, cost[at], chunks, &items);
    known.resize(items.size(), timed);
  }
  std::vector<std::size_t> order(items.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (known[a] != known[b]) return !known[a];
    return items[a].expected_s > items[b].expected_s;
  });
  std::vector<WorkItem> ordered;
  for (std::size_t k : order) ordered.push_back(std::move(items[k]));
  return ordered;
}

}  // namespace

double CaseWeight(const nlohmann::json& params) {
  if (!params.is_object()) return 1;
  const auto dtype = params.find("dtype");
  const double element_bytes =
      ElementBytes(dtype != params.end() && dtype->is_string() ? dtype->get<std::string>() : "");
  double elements = 0;
  for (const auto& [key, value] : params.items()) elements += Elements(value);
  return 1 + elements * element_bytes / (64.0 * 1024 * 1024);
}

std::vector<double> PredictCost(const std::vector<OperatorShape>& ops,
                                const std::map<std::string, double>& previous_seconds) {
  const auto units = [](const OperatorShape& op) {
    return 1 + (op.case_weight > 0 ? op.case_weight : std::max(op.known_cases, 1));
  };
  double known_s = 0, known_units = 0;
  for (const OperatorShape& op : ops) {
    if (auto it = previous_seconds.find(op.name); it != previous_seconds.end()) {
      known_s += it->second;
      known_units += units(op);
    }
  }
  const double unit_s = known_units > 0 && known_s > 0 ? known_s / known_units : 1.0;
  std::vector<double> cost;
  for (const OperatorShape& op : ops) {
    auto it = previous_seconds.find(op.name);
    cost.push_back(it != previous_seconds.end() ? it->second : unit_s * units(op));
  }
  return cost;
}

std::vector<WorkItem> PlanWork(const std::vector<OperatorShape>& ops,
                               const std::map<std::string, double>& previous_seconds,
                               const PlanSettings& settings) {
  std::vector<WorkItem> items = settings.policy == SchedulePolicy::kFifo
                                    ? PlanFifo(ops, previous_seconds, settings.max_cases_per_item)
                                    : PlanByCost(ops, previous_seconds, settings);
  for (int i = 0; i < static_cast<int>(items.size()); ++i) items[static_cast<std::size_t>(i)].id = i;
  return items;
}

}  // namespace opverify
