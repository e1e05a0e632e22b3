#include "runner/verify/operator_run.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>

#include "runner/common/sha256.h"
#include "runner/judge/element_reader.h"

#include "runner/executor/executor_client.h"
#include "runner/verify/executor_session.h"

namespace opverify {
namespace {

using nlohmann::json;

InputType InputTypeOf(const json& dtypes) {
  std::vector<DType> parsed;
  for (const auto& name : dtypes) {
    if (auto dtype = ParseDType(name.get<std::string>())) parsed.push_back(*dtype);
  }
  return InferInputType(parsed);
}

// A reference output that cannot tell a right kernel from a wrong one: every
// element within 1e-6 of zero, or one value repeated. Both scans stop at the
// first element that shows otherwise, so a normal output costs a few reads.
std::optional<std::string> DegenerateReference(const TensorView& golden) {
  if (!IsFloat(golden.dtype) || golden.NumElements() < 2) return std::nullopt;
  constexpr double kNearZero = 1e-6;
  ElementReader reader(golden);
  std::vector<double> run(ElementReader::kMaxRun);
  bool near_zero = true, constant = true, have_first = false;
  double first = 0;
  const std::int64_t n = golden.NumElements();
  for (std::int64_t start = 0; start < n && (near_zero || constant); start += ElementReader::kMaxRun) {
    const std::int64_t count = std::min<std::int64_t>(ElementReader::kMaxRun, n - start);
    reader.ReadDoubles(start, count, DType::kFloat64, run.data());
    for (std::int64_t i = 0; i < count; ++i) {
      const double v = run[static_cast<std::size_t>(i)];
      if (!std::isfinite(v)) continue;
      if (std::fabs(v) > kNearZero) near_zero = false;
      if (!have_first) {
        first = v;
        have_first = true;
      } else if (v != first) {
        constant = false;
      }
    }
  }
  if (!have_first) return std::nullopt;  // all NaN/Inf: the judge's NaN and Inf checks speak
  if (near_zero) {
    return "degenerate reference: every finite element of the reference's output is within 1e-6 of zero, so "
           "almost any implementation matches it; give the operator inputs that make it produce real values";
  }
  if (constant) {
    return "degenerate reference: the reference's output is one value (" + std::to_string(first) +
           ") repeated, so it cannot tell a right kernel from a wrong one";
  }
  return std::nullopt;
}

void JudgeOutputs(const OperatorSpec& spec, bool non_compute, const CallResult& call, CaseOutcome* outcome) {
  JudgeOptions options;
  options.standard = spec.standard;
  options.precision_mode = spec.precision_mode;
  options.non_compute = non_compute;
  options.input_type = InputTypeOf(call.reply.value("input_dtypes", json::array()));
  const auto& tensors = call.tensors;
  const auto started = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i + 1 < tensors.size(); i += 2) {
    outcome->tensors.emplace_back(tensors[i], tensors[i + 1]);
    const TensorView& actual = tensors[i + 1];
    outcome->actual_sha256.push_back(
        Sha256Hex(actual.data, static_cast<std::size_t>(actual.NumElements()) * DTypeSize(actual.dtype)));
    Verdict verdict = Judge(tensors[i], tensors[i + 1], options);
    spdlog::info("[case {}] output {}: route {} ({} {}), {}", outcome->index + 1, i / 2,
                 RouteName(verdict.route), DTypeName(verdict.dtype), ShapeToString(verdict.shape),
                 verdict.passed ? "passed" : std::string(ErrorTypeName(verdict.error_type)));
    if (!verdict.passed && outcome->error_type.empty()) {
      outcome->error_type = std::string(ErrorTypeName(verdict.error_type));
      outcome->error_msg = (tensors.size() > 2 ? "output " + std::to_string(i / 2) + ": " : "") + verdict.error_msg;
    }
    for (const auto& w : verdict.warnings) outcome->warnings.push_back("output " + std::to_string(i / 2) + ": " + w);
    if (std::optional<std::string> degenerate = DegenerateReference(tensors[i])) {
      spdlog::warn("[case {}] output {}: {}", outcome->index + 1, i / 2, *degenerate);
      outcome->warnings.push_back("output " + std::to_string(i / 2) + ": " + *degenerate);
    }
    outcome->outputs.push_back(std::move(verdict));
  }
  outcome->judge_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  outcome->passed = outcome->error_type.empty();
}

}  // namespace

int OperatorOutcome::passed_cases() const {
  int passed = 0;
  for (const auto& c : cases) passed += c.passed ? 1 : 0;
  return passed;
}

std::string CutMiddle(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  const std::string marker = "\n... [" + std::to_string(text.size() - limit) + " characters cut] ...\n";
  const std::size_t keep = limit > marker.size() ? limit - marker.size() : 0;
  return text.substr(0, keep / 2) + marker + text.substr(text.size() - (keep - keep / 2));
}

Result<OperatorSpec> SpecFromVerifyDir(const std::string& dir, const std::string& op_name,
                                       const std::string& impl_name) {
  const std::filesystem::path folder = std::filesystem::absolute(dir);
  OperatorSpec spec;
  spec.name = op_name;
  spec.task_file = (folder / (op_name + "_torch.py")).string();
  spec.impl_file = (folder / (op_name + "_" + impl_name + ".py")).string();
  spec.impl_name = impl_name;
  for (const auto& file : {spec.task_file, spec.impl_file}) {
    if (!std::filesystem::is_regular_file(file)) return Status::NotFound(file + ": no such file");
  }
  return spec;
}

OperatorOutcome RunOperator(const OperatorSpec& spec, const RunOptions& options,
                            const std::function<void(const CaseOutcome&)>& on_case) {
  OperatorOutcome out;
  out.op_name = spec.name;
  OperatorSession session(spec, options);
  CallResult loaded = session.Open();
  const bool load_ok = loaded.failure == CallFailure::kNone && loaded.reply.value("ok", false);
  const int case_count = loaded.reply.is_object() ? loaded.reply.value("case_count", 0) : 0;
  out.case_count = case_count;
  auto skipped = [&](int i) { return spec.skip_case && spec.skip_case(i); };
  out.non_compute = spec.non_compute.value_or(loaded.reply.is_object() && loaded.reply.value("non_compute", false));

  auto finish = [&](CaseOutcome c) {
    c.environment = &out.environment;
    if (on_case) on_case(c);
    c.tensors.clear();  // they point into the executor's memory, valid until its next call
    c.environment = nullptr;
    out.cases.push_back(std::move(c));
  };
  auto fail_all = [&](int from, const std::string& type, const std::string& message, int regression = 0) {
    for (int i = from; i < std::max(case_count, from == 0 ? 1 : from); ++i) {
      if (skipped(i)) continue;
      CaseOutcome c;
      c.index = i;
      c.error_type = type;
      c.error_msg = CutMiddle(message);
      c.regression_type = regression;
      finish(std::move(c));
    }
  };
  if (!load_ok) {
    session.Spoil();
    spdlog::error("{}: load failed: {}", spec.name, CallErrorMessage(loaded));
    fail_all(0, CallErrorType(loaded), CallErrorMessage(loaded));
    return out;
  }
  if (spec.lint) {
    CallResult lint = session.executor()->Call({{"op", "lint"}, {"file", spec.impl_file}, {"non_compute", out.non_compute}},
                                               spec.timeout_s);
    if (lint.failure != CallFailure::kNone || !lint.reply.value("ok", false)) {
      fail_all(0, CallErrorType(lint), "lint: " + CallErrorMessage(lint));
      return out;
    }
    out.lint = lint.reply["lint"];
    if (!out.lint.value("valid", false)) {
      session.Spoil();
      // An unreadable file or a syntax error has no type (null) but an "error".
      const int type = out.lint.contains("regression_type") && out.lint["regression_type"].is_number_integer()
                           ? out.lint["regression_type"].get<int>()
                           : 0;
      const std::string why = out.lint.contains("error") && out.lint["error"].is_string()
                                  ? out.lint["error"].get<std::string>()
                                  : "regression type " + std::to_string(type);
      spdlog::warn("{}: lint: {}", spec.name, why);
      fail_all(0, "LintError", why + ": " + out.lint.dump(), type);
      return out;
    }
  }
  CallResult environment = session.executor()->Call({{"op", "environment"}}, spec.timeout_s);
  if (environment.failure == CallFailure::kNone && environment.reply.value("ok", false)) {
    out.environment = environment.reply["environment"];
  }

  bool probed = false;
  std::string hidden_state_failure;  // once the probe fails, no case can be judged
  for (int i = 0; i < case_count; ++i) {
    if (skipped(i)) continue;
    if (!hidden_state_failure.empty()) {
      CaseOutcome c;
      c.index = i;
      c.error_type = "HiddenStateMismatch";
      c.error_msg = hidden_state_failure;
      finish(std::move(c));
      continue;
    }
    if (session.executor() == nullptr || !session.executor()->alive()) {
      CallResult reopened = session.Open();
      if (reopened.failure != CallFailure::kNone || !reopened.reply.value("ok", false)) {
        fail_all(i, CallErrorType(reopened), "restarting the executor: " + CallErrorMessage(reopened));
        return out;
      }
    }
    CaseOutcome c;
    c.index = i;
    if (out.environment.is_object() && out.environment.contains("device") && out.environment["device"].is_object()) {
      c.device_name = out.environment["device"].value("name", "");
    }
    // The probe runs before the first case this call runs (seed §3).
    json request = {{"op", "run_case"}, {"index", i}, {"seed", spec.seed},
                    {"probe", spec.probe && !probed}, {"check_determinism", spec.probe_determinism}};
    probed = true;
    const auto started = std::chrono::steady_clock::now();
    CallResult call = session.executor()->Call(request, spec.timeout_s);
    if (call.failure == CallFailure::kNone) {
      const json& r = call.reply;
      if (r.contains("input_desc")) c.input_desc = r["input_desc"];
      if (r.contains("probe")) c.probe = r["probe"];
      if (r.contains("timings")) c.timings = r["timings"];
      c.golden_device = r.value("golden_device", "");
      if (r.contains("fallback_reason") && r["fallback_reason"].is_string()) c.fallback_reason = r["fallback_reason"];
      for (const auto& w : r.value("warnings", json::array())) c.warnings.push_back(w.get<std::string>());
    }
    if (std::optional<CallError> error = session.Failed(call)) {
      c.error_type = error->type;
      c.error_msg = CutMiddle(error->message);
      spdlog::warn("[case {}/{}] {}: {}", i + 1, case_count, c.error_type, c.error_msg.substr(0, 200));
      if (c.error_type == "HiddenStateMismatch") {
        hidden_state_failure = "the hidden-state probe failed before case " + std::to_string(i + 1) +
                               " (Model's state differs from ModelNew's, so no output can be judged): " +
                               c.error_msg.substr(0, 1000);
      }
    } else {
      JudgeOutputs(spec, out.non_compute, call, &c);
      if (c.fallback_reason) spdlog::info("[case {}/{}] golden fell back to the device: {}", i + 1, case_count, *c.fallback_reason);
      // Stress runs: the same case again, each judged; the first run's
      // outputs must come back bit for bit. The record keeps the last run's
      // tensors (an earlier call's are gone once the next is made).
      for (int run = 2; c.passed && run <= spec.repeat; ++run) {
        json again = {{"op", "run_case"}, {"index", i}, {"seed", spec.seed}, {"probe", false}};
        CallResult extra = session.executor()->Call(again, spec.timeout_s);
        c.tensors.clear();
        const std::string which = "run " + std::to_string(run) + " of " + std::to_string(spec.repeat) + ": ";
        if (std::optional<CallError> stress_error = session.Failed(extra)) {
          c.passed = false;
          c.error_type = stress_error->type;
          c.error_msg = CutMiddle(which + stress_error->message);
          break;
        }
        CaseOutcome trial;
        trial.index = i;
        JudgeOutputs(spec, out.non_compute, extra, &trial);
        c.tensors = trial.tensors;
        std::optional<std::size_t> differs;  // the first output whose bits changed since run 1
        for (std::size_t k = 0; k < trial.actual_sha256.size() && k < c.actual_sha256.size() && !differs; ++k) {
          if (trial.actual_sha256[k] != c.actual_sha256[k]) differs = k;
        }
        if (trial.passed && !differs) continue;
        // The record describes the run that failed: its verdicts, digests and tensors.
        std::string message = trial.error_msg;
        if (trial.passed) {
          message = "output " + std::to_string(*differs) + " differs bit for bit from run 1 (sha256 " +
                    c.actual_sha256[*differs].substr(0, 16) + "... then " +
                    trial.actual_sha256[*differs].substr(0, 16) + "...), though each run passed the judge";
        }
        c.passed = false;
        c.error_type = trial.passed ? "Nondeterministic" : trial.error_type;
        c.error_msg = which + message;
        c.outputs = std::move(trial.outputs);
        c.actual_sha256 = std::move(trial.actual_sha256);
      }
      if (!c.passed && spec.repeat > 1) {
        spdlog::warn("[case {}/{}] {}: {}", i + 1, case_count, c.error_type, c.error_msg.substr(0, 200));
      }
    }
    c.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    finish(std::move(c));
  }
  return out;
}

}  // namespace opverify
