// The seed's verify_result.json, field for field: op_name, total_cases,
// passed_cases, failed_cases, failures (case_idx from 1, input_desc,
// error_type, error_msg cut to 2000 characters, metrics on AccuracyError),
// environment; then our own details under "opverify".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runner/judge/judge.h"
#include "runner/verify/operator_run.h"

namespace opverify {

struct VerifyContext {
  std::string impl_name;
  bool fresh_cache = false;
  std::string cache_dir;  // the TRITON_CACHE_DIR the executors used, if set
};

nlohmann::ordered_json VerifyResultJson(const OperatorOutcome& outcome, const VerifyContext& context);

// The seed's flat `metrics` of a failure, filled from the route that decided.
nlohmann::ordered_json FlatMetrics(const Verdict& verdict);

// verify_result.json for triton_ascend_impl, verify_result_<x>.json for
// triton_<x>, else verify_result_<impl>.json (the benchmark's L1 gate reads these).
std::string VerifyResultFileName(const std::string& impl_name);

}  // namespace opverify
