// What one operator's verification found: each case's outcome (its
// verdicts, error, seeds, waivers) and the operator's together. Plain data,
// made by runner/verify/operator_run.h and read by the reports
// (runner/results/verify_result.h, the batch's store and the reducer).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/judge/judge.h"
#include "runner/tensor/tensor_view.h"

namespace opverify {

// One judged output of a case.
struct OutputOutcome {
  Verdict verdict;
};

struct CaseOutcome {
  int index = 0;  // 0-based; reports print index + 1
  // The operator's cases, as its load counted them (the seed's `n` of [用例 i/n]).
  int case_count = 0;
  std::string edge_label;  // a generated edge case's label ("rows=1023", "nan_inf"); empty for the operator's own
  nlohmann::json edge_params;  // its get_inputs parameters
  nlohmann::json input_desc = nlohmann::json::array();
  bool passed = false;
  std::string error_type;  // empty when passed; else a judge error type or an execution one
  std::string error_msg;
  std::vector<Verdict> outputs;  // one per output, when the case ran to the end
  std::string golden_device;
  std::string golden_precision = "native";  // "fp64" when the golden came from the widened reference
  std::string device_name;  // where ModelNew ran (the environment's device name)
  std::optional<std::string> fallback_reason;
  nlohmann::json timings = nlohmann::json::object();
  std::vector<std::string> warnings;
  nlohmann::json probe;  // the probe's findings, first case only
  nlohmann::json runtime_evidence;  // cuda: torch operators and device kernels of the first run's forward
  int regression_type = 0;  // LintError: the lint's type
  // Declared exceptions this case needed (the lint's and its runtime
  // evidence's, runner/results/waivers.h); a case that passed with any is "waived".
  nlohmann::json waivers = nlohmann::json::array();
  bool waived() const { return passed && !waivers.empty(); }
  std::uint64_t seed = 0;                  // the recorded run's input seed
  std::vector<std::uint64_t> seeds;        // every seed the case ran with, in order
  std::vector<std::string> actual_sha256;  // per output: the actual's bytes, for bitwise A/B comparison
  double wall_ms = 0;   // request to judged
  double judge_ms = 0;
  // Per output: golden and actual. Valid only during the on_case callback.
  std::vector<std::pair<TensorView, TensorView>> tensors;
  // The executor's environment fingerprint. Valid only during the callback.
  const nlohmann::json* environment = nullptr;
};

struct OperatorOutcome {
  std::string op_name;
  std::vector<CaseOutcome> cases;
  nlohmann::json lint;         // the lint's JSON, when run
  nlohmann::json environment;  // the executor's fingerprint
  // How its implementation executor started (OperatorSession::startup()).
  nlohmann::json startup = nlohmann::json::object();
  bool non_compute = false;        // in effect: the spec's, else the task file's NON_COMPUTE
  bool non_compute_given = false;  // the spec's alone (the --non-compute flag), as the seed's cmdline records it
  int case_count = 0;  // of the operator, skipped cases included
  int own_cases = 0;   // the operator's own; the generated edge cases follow them
  struct EdgeCase {
    std::string label;       // "rows=1023", "nan_inf"
    nlohmann::json params;   // its get_inputs parameters
  };
  std::vector<EdgeCase> edge_cases;  // case own_cases + k is edge_cases[k]
  int passed_cases() const;          // passed or waived: not failed
  int waived_cases() const;
  // The declared exceptions that applied (AllowancesToJson of the spec's), and
  // whether anything could have needed them: the lint ran, or a case carried
  // runtime evidence (runner/results/waivers.h).
  nlohmann::json declared_allowances = nlohmann::json::array();
  bool allowances_checked() const;
};

}  // namespace opverify
