// Reference trust: whether an accuracy failure that reproduces bit for bit
// (the A/B's real_defect) is the reference's own imprecision rather than the
// implementation's. Two judgements, each from a new executor running only
// the failing case with the failing run's seed:
//
//   fp64              the implementation's failing output (the very bytes that
//                     failed, not a new run's) judged against a float64
//                     golden: the reference on inputs widened to float64,
//                     each output rounded once (golden_precision fp64)
//   device_reference  on a device backend (cuda, npu), torch's own device run
//                     of the reference (Model on the device, the same inputs)
//                     judged against the CPU golden, and the implementation's
//                     failing output judged against that device run
//
// The case is suspect (A/B class reference_suspect) when the implementation
// passes the float64 golden; or, only where no float64 golden can be made
// (the reference does not run on float64 inputs), when torch's device run
// fails the CPU golden and the implementation matches torch's device run.
// An implementation that fails the float64 golden is never suspect, whatever
// torch's device kernel does: the device evidence is then only recorded.
// The verdict stays failed either way.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runner/verify/operator_run.h"

namespace opverify {

// `original`: the failed case, its tensors still valid (call inside
// RunOperator's on_case). `backend`: the backend the case ran on ("cpu"
// leaves out the device run). `options`: as the original run (its cache).
// {"suspect", "reason", "fp64": {...}, "device_reference": {...}}; see
// docs/JUDGE.md ("Reference trust") for the fields.
nlohmann::json JudgeReferenceTrust(const OperatorSpec& spec, const RunOptions& options,
                                   const CaseOutcome& original, const std::string& backend);

}  // namespace opverify
