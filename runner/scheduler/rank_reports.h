// What a worker rank reports to the coordinator (coordinator.h, kTagCase):
// one case's summary, a work item's phases once it is done, or a
// benchmark's. A message is the JSON of one of these types; each has one
// field list shared by the worker's to_json and the coordinator's
// from_json, so that the two ranks cannot drift.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace opverify {

// The report's "kind": a case's has none, an item's "item", a benchmark's
// "bench"; kUnknown for any other (counted as a case, never as a failure).
enum class RankReportKind { kCase, kItem, kBench, kUnknown };
RankReportKind RankReportKindOf(const nlohmann::json& report);

// One case, judged and stored.
struct CaseSummary {
  std::string case_id;
  std::string op;
  std::optional<int> index;  // the case's index in its operator
  bool passed = false;
  bool waived = false;
  std::string error_type;  // "" when passed
  std::string message;     // the error message's first line, cut
  std::string dtype;       // its first tensor input's; "" without one
  double wall_ms = 0;
  double store_ms = 0;
  double ab_ms = 0;
  std::optional<std::string> ab;  // the A/B's class; unset without one
  // The case (of another chunk of its operator) whose A/B class this one
  // takes, its own class unset until that case's is known; "" for its own.
  std::string ab_inherited_from;
};
void to_json(nlohmann::json& j, const CaseSummary& s);
void from_json(const nlohmann::json& j, CaseSummary& s);

// Where a work item's time went, in milliseconds (the run's timeline).
struct ItemSummary {
  double item_ms = 0;     // the whole item
  double startup_ms = 0;  // executor start-up, import, lint: what the rest leave
  double compile_ms = 0;  // Triton's compilation within its cases
  double cases_ms = 0;    // its cases, less the compilation
  double ab_ms = 0;
  double store_ms = 0;
  double bench_ms = 0;
  double stopped_ms = 0;  // cases the run's stop cut short (not stored: --resume runs them)
  int cases = 0;
};
void to_json(nlohmann::json& j, const ItemSummary& s);
void from_json(const nlohmann::json& j, ItemSummary& s);

// One benchmarked work item.
struct BenchSummary {
  std::string op;
  std::size_t shapes = 0;
  double bench_ms = 0;
};
void to_json(nlohmann::json& j, const BenchSummary& s);
void from_json(const nlohmann::json& j, BenchSummary& s);

}  // namespace opverify
