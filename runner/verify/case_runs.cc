#include "runner/verify/case_runs.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "runner/common/failure_type.h"
#include "runner/common/sha256.h"
#include "runner/common/strings.h"
#include "runner/common/utf8.h"
#include "runner/results/waivers.h"
#include "runner/verify/degenerate_reference.h"

namespace opverify {
namespace {

using nlohmann::json;

// The input type of a case from its tensors' dtype names. A dtype the judge
// does not know (float8_e4m3fnuz, complex32, ...) still counts by its family:
// every float ranks above every integer, so one float input makes "float".
InputType InputTypeOf(const std::vector<std::string>& dtypes) {
  std::vector<DType> parsed;
  bool unknown_float = false, unknown_integer = false;
  for (const std::string& name : dtypes) {
    if (auto dtype = ParseDType(name)) {
      parsed.push_back(*dtype);
    } else if (name.find("float") != std::string::npos ||
               name.find("complex") != std::string::npos) {
      unknown_float = true;
    } else {
      unknown_integer = true;
    }
  }
  if (unknown_float) return InputType::kFloat;
  if (parsed.empty() && unknown_integer) return InputType::kInt;
  return InferInputType(parsed);
}

}  // namespace

void JudgeOutputs(const OperatorSpec& spec, bool non_compute, const CallResult& call,
                  const executor_protocol::RunCaseReply& reply, CaseOutcome* outcome) {
  JudgeOptions options;
  options.standard = spec.config.standard;
  options.precision_mode = spec.config.precision_mode;
  options.non_compute = non_compute;
  options.input_type = InputTypeOf(reply.input_dtypes);
  const auto& tensors = call.tensors;
  const auto started = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i + 1 < tensors.size(); i += 2) {
    outcome->tensors.emplace_back(tensors[i], tensors[i + 1]);
    const TensorView& actual = tensors[i + 1];
    outcome->actual_sha256.push_back(Sha256Hex(
        actual.data, static_cast<std::size_t>(actual.NumElements()) * DTypeSize(actual.dtype)));
    Verdict verdict = Judge(tensors[i], tensors[i + 1], options);
    spdlog::info("{} [case {}] output {}: route {} ({} {}), {}", spec.name, outcome->index + 1,
                 i / 2, RouteName(verdict.route), DTypeName(verdict.dtype),
                 ShapeToString(verdict.shape),
                 verdict.passed ? "passed" : std::string(ErrorTypeName(verdict.error_type)));
    if (!verdict.passed && outcome->error_type.empty()) {
      outcome->error_type = std::string(ErrorTypeName(verdict.error_type));
      outcome->error_msg =
          (tensors.size() > 2 ? "output " + std::to_string(i / 2) + ": " : "") + verdict.error_msg;
    }
    for (const auto& w : verdict.warnings)
      outcome->warnings.push_back("output " + std::to_string(i / 2) + ": " + w);
    if (std::optional<std::string> degenerate = DegenerateReference(tensors[i])) {
      spdlog::warn("{} [case {}] output {}: {}", spec.name, outcome->index + 1, i / 2, *degenerate);
      outcome->warnings.push_back("output " + std::to_string(i / 2) + ": " + *degenerate);
    }
    outcome->outputs.push_back(std::move(verdict));
  }
  outcome->judge_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  outcome->passed = outcome->error_type.empty();
}

std::vector<std::uint64_t> CaseSeeds(const OperatorSpec& spec) {
  if (spec.only_seed) return {*spec.only_seed};
  std::vector<std::uint64_t> seeds;
  for (int k = 1; k < spec.config.seeds; ++k)
    seeds.push_back(spec.config.seed + static_cast<std::uint64_t>(k));
  seeds.push_back(spec.config.seed);
  return seeds;
}

void TakeRun(CaseOutcome&& run, bool first, CaseOutcome* c) {
  c->passed = run.passed;
  c->error_type = std::move(run.error_type);
  c->error_msg = std::move(run.error_msg);
  c->outputs = std::move(run.outputs);
  c->tensors = std::move(run.tensors);
  c->actual_sha256 = std::move(run.actual_sha256);
  if (!run.input_desc.empty()) c->input_desc = std::move(run.input_desc);
  // A golden that fell back to the device in any run is told, with that device.
  if (run.fallback_reason || !c->fallback_reason) {
    c->golden_device = std::move(run.golden_device);
    c->fallback_reason = std::move(run.fallback_reason);
  }
  c->golden_precision = std::move(run.golden_precision);
  c->seed = run.seed;
  if (c->probe.is_null()) c->probe = std::move(run.probe);
  if (c->runtime_evidence.is_null()) c->runtime_evidence = std::move(run.runtime_evidence);
  c->regression_type = run.regression_type;
  MergeWaivers(&c->waivers, run.waivers);
  c->judge_ms += run.judge_ms;
  if (first) {
    c->timings = std::move(run.timings);
  } else {
    for (const auto& [key, value] : run.timings.items()) {
      if (value.is_number_integer() && c->timings.contains(key) &&
          c->timings[key].is_number_integer()) {  // a count (kernels_compiled) stays a count
        c->timings[key] = c->timings[key].get<std::int64_t>() + value.get<std::int64_t>();
      } else if (value.is_number() && c->timings.contains(key) && c->timings[key].is_number()) {
        c->timings[key] = c->timings[key].get<double>() + value.get<double>();
      } else if (!c->timings.contains(key)) {
        c->timings[key] = value;
      }
    }
  }
  for (std::string& w : run.warnings) {
    if (std::find(c->warnings.begin(), c->warnings.end(), w) == c->warnings.end())
      c->warnings.push_back(std::move(w));
  }
}

std::string RunName(std::size_t seeds, int repeat, std::uint64_t seed, int of_seed) {
  if (seeds * static_cast<std::size_t>(repeat) <= 1) return "";
  return (seeds > 1 ? "seed " + std::to_string(seed) + (repeat > 1 ? ", " : "") : "") +
         (repeat > 1 ? "run " + std::to_string(of_seed) + " of " + std::to_string(repeat) : "") +
         ": ";
}

void TakeReply(const executor_protocol::RunCaseReply& r, CaseOutcome* trial) {
  if (!r.input_desc.is_null()) trial->input_desc = r.input_desc;
  trial->probe = r.probe;
  if (!r.timings.is_null()) trial->timings = r.timings;
  trial->golden_device = r.golden_device;
  trial->golden_precision = r.golden_precision;
  trial->fallback_reason = r.fallback_reason;
  trial->warnings = r.warnings;
  trial->runtime_evidence = r.runtime_evidence;
  trial->regression_type = r.regression_type.value_or(0);
  trial->waivers = r.waivers.is_array() ? r.waivers : json::array();
}

void CheckSameBits(const std::vector<std::string>& first_sha, const std::string& which,
                   CaseOutcome* trial) {
  for (std::size_t k = 0; k < trial->actual_sha256.size() && k < first_sha.size(); ++k) {
    if (trial->actual_sha256[k] == first_sha[k]) continue;
    trial->passed = false;
    trial->error_type = FailureKindName(FailureKind::kNondeterministic);
    trial->error_msg = which + "output " + std::to_string(k) +
                       " differs bit for bit from run 1 (sha256 " + first_sha[k].substr(0, 16) +
                       "... then " + trial->actual_sha256[k].substr(0, 16) +
                       "...), though each run passed the judge";
    return;
  }
}

}  // namespace opverify
