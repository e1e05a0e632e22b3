// Job manifests (jobs/*.json, schemas/jobs.schema.json): which operators a
// batch runs, how each is judged and benchmarked, and the sweep of
// parameters that makes its cases (expanded by runner/cases/cases.h).
//
// A manifest is validated against the JSON Schema before anything else;
// every error names the file and the JSON path (or line and column for a
// syntax error). Paths inside a manifest are relative to its own folder.
// The format, field by field: docs/MANIFEST.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/cases/cases.h"  // ExpandSweep, CaseId, EdgeCaseId: what callers key cases on
#include "runner/common/status.h"
#include "runner/config/bench_config.h"
#include "runner/config/operator_code.h"
#include "runner/config/operator_config.h"

namespace opverify {

// One operator of a job, with every default applied.
struct OperatorJob {
  std::string name;  // the file prefix, e.g. "softmax"; unique in a job
  // Its task and implementation files (absolute), or its "override" object
  // as the manifest gives it.
  OperatorCode code;
  OperatorConfig config;  // how it is judged (runner/config/operator_config.h)
  BenchConfig bench = BenchConfig::ForManifest();  // how it is benchmarked
  std::vector<std::string> tags;
  std::optional<std::string> task_sha256;  // anchor: a changed task file is refused
  // The sweep's cartesian product, one JSON object of get_inputs keyword
  // arguments per case, in a stable order. Empty: the task's own cases
  // (get_input_groups(), else get_inputs()).
  std::vector<nlohmann::json> cases;
  std::string source;  // "<manifest file>:/operators/3" for messages
};

struct JobManifest {
  std::string path;  // the top manifest, absolute
  std::string name;
  std::string description;
  std::vector<OperatorJob> operators;  // includes resolved, in order, duplicates refused
};

// How large a job may grow. A sweep's size is its values' product: six
// parameters of twenty values are 64 million cases, tens of GB of JSON, so
// sizes are checked before anything is expanded.
struct ManifestLimits {
  static constexpr std::uint64_t kDefaultOperatorCases = 100000;
  static constexpr std::uint64_t kDefaultJobCases = 1000000;
  // Given (opverify-batch --max-cases, --max-job-cases): they win over the
  // manifest's "max_cases" and "max_job_cases"; unset, those or the defaults.
  std::optional<std::uint64_t> operator_cases;
  std::optional<std::uint64_t> job_cases;
};

// Errors: InvalidInput naming the file and the JSON path (or line:column),
// NotFound for a missing manifest, include or operator file (naming the
// entry and the path), InvalidInput for a sweep over its cap (naming the
// cap, the field and the flag that raise it). Messages name files as `path`
// names them: relative paths stay relative to the working directory.
Result<JobManifest> LoadManifest(const std::string& path, const ManifestLimits& limits = {});

// The anchors (task_sha256): every task file that has one must still hash
// to it. A changed task file means a changed reference, and nothing it
// judged could be trusted: exit 4, as the upstream verifier. With
// `require_anchors`, an operator without one is refused too (exit 3).
struct AnchorProblem {
  int exit_code = 4;
  std::string message;
};
std::optional<AnchorProblem> CheckTaskAnchors(const JobManifest& job, bool require_anchors);

}  // namespace opverify
