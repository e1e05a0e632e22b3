// Declared exceptions at work (docs/MANIFEST.md, "Declared exceptions"): the
// waivers a case was given (which allowance, why, what it covered) merged
// from the lint and the runtime evidence, and what a run made of each
// declared allowance: used, stale (nothing needed it) or unchecked (neither
// the lint nor the runtime evidence ran where it applied). Pure functions
// over the JSON the executor gives (opverify_runtime/allowances.py).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace opverify {

// Adds `more`'s waivers to `*into` ([{op, why, declared_at, found: [...],
// found_count, ...}]): one entry per declared_at, their findings together
// (at most kMaxWaiverFindings kept, found_count counting all).
inline constexpr std::size_t kMaxWaiverFindings = 8;
void MergeWaivers(nlohmann::json* into, const nlohmann::json& more);

// A waiver's (or an allowance's, a finding's) string field; "" when it is
// absent or no string (a record read back from a store is not trusted).
std::string WaiverField(const nlohmann::json& waiver, const char* key);

// One line per waiver for people: "aten::sort (sorts on the host by design)".
std::string WaiverLine(const nlohmann::json& waiver);

// Where a waiver's findings are: "/x/lib/ops.py:12 (static), aten::sort
// (runtime) and 3 more".
std::string FindingsText(const nlohmann::json& waiver);

// An operator of a run, as the allowance accounting sees it.
struct OperatorAllowances {
  std::string op;
  nlohmann::json declared = nlohmann::json::array();  // AllowancesToJson of its config
  bool checked = false;                      // its lint ran, or a case carried runtime evidence
  std::vector<nlohmann::json> case_waivers;  // each of its cases' "waivers"
};

// A declared allowance and what the run made of it. An allowance declared
// once (defaults, a library) that applies to several operators is one entry.
struct AllowanceUse {
  nlohmann::json allowance;            // op, why, where?, library?, declared_at
  std::vector<std::string> operators;  // it applied to, in the order met
  int cases = 0;                       // cases it waived
  bool checked = false;                // some operator it applied to was checked
  // "used", "stale" (checked, and no case needed it) or "unchecked".
  std::string State() const;
};

// Every allowance the operators declare, by declared_at in the order met.
std::vector<AllowanceUse> AllowanceUses(const std::vector<OperatorAllowances>& operators);

// {op, why, where?, library?, declared_at, operators, cases, state}.
nlohmann::ordered_json AllowanceUseJson(const AllowanceUse& use);

// "allowance aten::topk (jobs/x.json:/operators/0/allow_torch/1) was not
// needed by any case of op_a, op_b: stale; remove it": the console's warning.
std::string StaleAllowanceLine(const AllowanceUse& use);

}  // namespace opverify
