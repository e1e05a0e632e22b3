// The seed's verify_result.json, field for field: op_name, total_cases,
// passed_cases, failed_cases, failures (case_idx from 1, input_desc,
// error_type, error_msg cut to 2000 characters, metrics on AccuracyError),
// environment; then our own details under "opverify".
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "runner/judge/judge.h"
#include "runner/results/operator_outcome.h"

namespace opverify {

struct VerifyContext {
  std::string impl_name;
  bool fresh_cache = false;
  std::string cache_dir;  // the TRITON_CACHE_DIR the executors used, if set
  bool seed_compat = false;  // --seed-compat: recorded in environment.cmdline
};

nlohmann::ordered_json VerifyResultJson(const OperatorOutcome& outcome, const VerifyContext& context);

// The pieces, for a report assembled later from stored cases (the batch):
// a failed case's entry in `failures`, a case's details under
// opverify.cases, and the whole file from them.
nlohmann::ordered_json FailureEntry(const CaseOutcome& c);
// An input_desc (the executor's, through an unordered json) with each
// entry's keys in the seed's order: type, shape, dtype, value, then ours.
nlohmann::ordered_json SeedInputDesc(const nlohmann::json& input_desc);
nlohmann::ordered_json CaseDetails(const CaseOutcome& c);
struct SeedResultParts {
  std::string op_name;
  int total_cases = 0;
  int passed_cases = 0;
  std::vector<nlohmann::ordered_json> failures;  // in case order
  std::vector<nlohmann::ordered_json> details;   // in case order
  nlohmann::json environment;                    // the executor's fingerprint
  nlohmann::json lint;
  bool non_compute = false;               // in effect
  std::optional<bool> non_compute_given;  // the --non-compute flag; unset: taken as non_compute
  int waived_cases = 0;                   // of passed_cases: passed under declared exceptions
  // Each declared allowance and what the run made of it (AllowanceUseJson).
  nlohmann::ordered_json allow_torch = nlohmann::ordered_json::array();
};
nlohmann::ordered_json SeedVerifyResult(const SeedResultParts& parts, const VerifyContext& context);

// The seed's flat `metrics` of a failure, filled from the route that decided.
nlohmann::ordered_json FlatMetrics(const Verdict& verdict);

// verify_result.json for triton_ascend_impl, verify_result_<x>.json for
// triton_<x>, else verify_result_<impl>.json (the benchmark's L1 gate reads these).
std::string VerifyResultFileName(const std::string& impl_name);

}  // namespace opverify
