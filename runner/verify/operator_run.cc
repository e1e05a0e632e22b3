#include "runner/verify/operator_run.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "runner/common/sha256.h"
#include "runner/common/strings.h"
#include "runner/common/terminal_text.h"
#include "runner/common/user_file.h"
#include "runner/judge/element_reader.h"

#include "runner/executor/executor_client.h"
#include "runner/results/waivers.h"
#include "runner/verify/degenerate_reference.h"
#include "runner/verify/executor_session.h"

namespace opverify {
namespace {

using nlohmann::json;
namespace proto = executor_protocol;

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

void JudgeOutputs(const OperatorSpec& spec, bool non_compute, const CallResult& call,
                  const proto::RunCaseReply& reply, CaseOutcome* outcome) {
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

// The seeds a case runs with: the extra ones first, the base seed last (so a
// passing case's record is the base seed's run).
std::vector<std::uint64_t> CaseSeeds(const OperatorSpec& spec) {
  if (spec.only_seed) return {*spec.only_seed};
  std::vector<std::uint64_t> seeds;
  for (int k = 1; k < spec.config.seeds; ++k)
    seeds.push_back(spec.config.seed + static_cast<std::uint64_t>(k));
  seeds.push_back(spec.config.seed);
  return seeds;
}

// Makes a run the case's record; timings add up over runs, warnings gather.
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
      if (value.is_number() && c->timings.contains(key) && c->timings[key].is_number()) {
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

// " (first: FILE:LINE: CALL: REASON)" of the lint's first violation of
// `type`, so that the message says where before the whole JSON follows; the
// file is the implementation's, or the library file the violation is in.
std::string FirstViolation(const json& lint, int type) {
  const json checks =
      lint.value("checks", json::object());  // named: a loop over a temporary dangles
  for (const auto& [name, check] : checks.items()) {
    if (check.value("regression_type", 0) != type || check.value("passed", true)) continue;
    const json violations = check.value("violations", json::array());
    for (const json& v : violations) {
      return " (first: " + v.value("file", lint.value("file", "")) + ":" +
             std::to_string(v.value("line", 0)) + ": " + v.value("call", "") + ": " +
             v.value("reason", "") + ")";
    }
  }
  return "";
}

// The file and the declared library; an override operator has no file of the
// user's: its enable callables are linted instead.
proto::LintRequest LintRequestFor(const OperatorSpec& spec, bool non_compute) {
  proto::LintRequest lint;
  lint.file = spec.impl_file;
  lint.non_compute = non_compute;
  lint.library = spec.config.library;
  lint.python_path = spec.config.python_path;
  lint.allow_torch = AllowancesToJson(spec.config.allow_torch);
  const json enable =
      spec.override_spec.is_object() ? spec.override_spec.value("enable", json()) : json();
  if (enable.is_string()) lint.entries.push_back(enable.get<std::string>());
  if (enable.is_object()) lint.entries = {enable.value("enter", ""), enable.value("exit", "")};
  if (!lint.entries.empty()) lint.overrides = spec.override_spec.value("op", "");
  return lint;
}

}  // namespace

bool SharedGoldenFromEnvironment() {
  const char* shared = std::getenv("OPVERIFY_SHARED_GOLDEN");
  return shared != nullptr && std::string(shared) == "1";
}

SparePrestart SparePrestartFromEnvironment() {
  const char* off = std::getenv("OPVERIFY_NO_SPARE");
  return off != nullptr && std::string(off) == "1" ? SparePrestart::kNever : SparePrestart::kOnOpen;
}

Result<OperatorSpec> SpecFromVerifyDir(const std::string& dir, const std::string& op_name,
                                       const std::string& impl_name) {
  // Names become file names (and the store's): a path separator, a NUL or
  // more than a file name holds is refused before any file is looked at.
  for (const auto& [what, name] :
       {std::pair{"operator name", op_name}, std::pair{"implementation name", impl_name}}) {
    if (name.empty() || name.size() > 128 ||
        name.find_first_of(std::string("/\0", 2)) != std::string::npos) {
      return Status::InvalidInput(
          Printf("%s '%.40s%s' (%zu characters): 1 to 128 characters, without '/' or NUL", what,
                 name.c_str(), name.size() > 40 ? "..." : "", name.size()));
    }
  }
  std::error_code ec;
  const std::filesystem::path folder = std::filesystem::absolute(dir, ec);
  if (ec) return Status::IoError(dir + ": " + ec.message());
  OperatorSpec spec;
  spec.name = op_name;
  spec.task_file = (folder / (op_name + "_torch.py")).string();
  spec.impl_file = (folder / (op_name + "_" + impl_name + ".py")).string();
  spec.impl_name = impl_name;
  for (const auto& file : {spec.task_file, spec.impl_file}) {
    if (Status regular = CheckRegularFile(file, "file"); !regular.ok()) return regular;
  }
  return spec;
}

OperatorOutcome RunOperator(const OperatorSpec& spec, const RunOptions& options,
                            const std::function<void(const CaseOutcome&)>& on_case) {
  OperatorOutcome out;
  out.op_name = spec.name;
  out.declared_allowances = AllowancesToJson(spec.config.allow_torch);
  OperatorSession session(spec, options);
  CallResult loaded = session.Open();
  out.startup = session.startup();
  const bool load_ok = loaded.succeeded();
  // What the load told, also when it failed after counting the cases.
  const auto load = loaded.As<proto::LoadReply>();
  const int case_count = load.case_count;
  out.case_count = case_count;
  // The generated edge cases come after the operator's own, labelled (a
  // load that failed once they were made still names them).
  for (const auto& edge : load.edge_cases) out.edge_cases.push_back({edge.label, edge.params});
  out.own_cases = case_count - static_cast<int>(out.edge_cases.size());
  auto edge_of = [&](int i) -> const OperatorOutcome::EdgeCase* {
    return i >= out.own_cases && i < case_count
               ? &out.edge_cases[static_cast<std::size_t>(i - out.own_cases)]
               : nullptr;
  };
  auto label_of = [&](int i) { return edge_of(i) != nullptr ? edge_of(i)->label : std::string(); };
  const json described_inputs =
      spec.skip_by_inputs && case_count > 0 ? session.DescribeCases() : json::array();
  auto skipped = [&](int i) {
    return (spec.skip_case && spec.skip_case(i, label_of(i))) ||
           (spec.skip_by_inputs &&
            spec.skip_by_inputs(i, label_of(i), OperatorSession::InputDescAt(described_inputs, i)));
  };
  out.non_compute = spec.config.non_compute.value_or(load.non_compute);
  out.non_compute_given = spec.config.non_compute.value_or(false);

  json lint_waivers = json::array();  // what the lint waived holds for every case
  auto finish = [&](CaseOutcome c) {
    c.case_count = case_count;
    MergeWaivers(&c.waivers, lint_waivers);
    c.environment = &out.environment;
    if (on_case) on_case(c);
    c.tensors.clear();  // they point into the executor's memory, valid until its next call
    c.environment = nullptr;
    out.cases.push_back(std::move(c));
  };
  auto describe_cases = [&]() { return case_count > 0 ? session.DescribeCases() : json::array(); };
  auto fail_all = [&](int from, const std::string& type, const std::string& message,
                      int regression = 0, const json& input_descs = json::array()) {
    for (int i = from; i < std::max(case_count, from == 0 ? 1 : from); ++i) {
      if (skipped(i)) continue;
      CaseOutcome c;
      c.index = i;
      c.input_desc = OperatorSession::InputDescAt(input_descs, i);
      c.error_type = type;
      c.error_msg = CutMiddle(message);
      c.regression_type = regression;
      finish(std::move(c));
    }
  };
  // A stopped run records nothing of what it abandoned (--resume runs it).
  auto stopped = [&](const CallResult& call) { return CallErrorType(call) == kStoppedErrorType; };
  if (!load_ok && stopped(loaded)) return out;
  if (!load_ok) {
    session.Spoil();
    spdlog::error("{}: load failed: {}", spec.name, CallErrorMessage(loaded));
    fail_all(0, CallErrorType(loaded), CallErrorMessage(loaded), 0, describe_cases());
    return out;
  }
  if (spec.config.lint) {
    // In the executor that never imports the implementation: nothing it ran could change the lint.
    CallResult lint = session.reference()->Call(LintRequestFor(spec, out.non_compute), spec.config.timeout_s);
    if (!lint.succeeded()) {
      if (stopped(lint)) return out;
      fail_all(0, CallErrorType(lint), "lint: " + CallErrorMessage(lint));
      return out;
    }
    out.lint = lint.As<proto::LintReply>().lint;
    // What the declared exceptions covered holds for every case, failed or not.
    if (out.lint.contains("allow_torch") && out.lint["allow_torch"].is_object())
      lint_waivers = out.lint["allow_torch"].value("waived", json::array());
    if (!out.lint.value("valid", false)) {
      session.Spoil();
      // An unreadable file or a syntax error has no type (null) but an "error".
      const int type =
          out.lint.contains("regression_type") && out.lint["regression_type"].is_number_integer()
              ? out.lint["regression_type"].get<int>()
              : 0;
      const std::string why =
          out.lint.contains("error") && out.lint["error"].is_string()
              ? out.lint["error"].get<std::string>()
              : "regression type " + std::to_string(type) + FirstViolation(out.lint, type);
      spdlog::warn("{}: lint: {}", spec.name, why);
      fail_all(0, "LintError", why + ": " + out.lint.dump(), type, describe_cases());
      return out;
    }
    for (const json& waiver : lint_waivers)
      spdlog::info("{}: lint: waived by a declared exception: {}", spec.name, WaiverLine(waiver));
  }
  CallResult environment = session.implementation()->Call(proto::EnvironmentRequest{}, spec.config.timeout_s);
  if (environment.succeeded()) out.environment = environment.As<proto::EnvironmentReply>().environment;
  if (const std::string sandbox = session.implementation()->sandbox_mode();
      !sandbox.empty() && out.environment.is_object()) {
    out.environment["sandbox"] =
        sandbox;  // docs/SECURITY.md: "none" when nothing confined the executor
  }

  bool probed = false;
  std::string hidden_state_failure;  // once the probe fails, no case can be judged
  for (int i = 0; i < case_count; ++i) {
    if (options.stop != nullptr && options.stop->load() != 0) break;
    if (skipped(i)) continue;
    if (!hidden_state_failure.empty()) {
      CaseOutcome c;
      c.index = i;
      c.error_type = "HiddenStateMismatch";
      c.error_msg = hidden_state_failure;
      finish(std::move(c));
      continue;
    }
    if (!session.ready()) {
      CallResult reopened = session.Open();
      if (!reopened.succeeded()) {
        fail_all(i, CallErrorType(reopened),
                 "restarting the executor: " + CallErrorMessage(reopened), 0, describe_cases());
        return out;
      }
    }
    CaseOutcome c;
    c.index = i;
    if (const OperatorOutcome::EdgeCase* edge = edge_of(i)) {
      c.edge_label = edge->label;
      c.edge_params = edge->params;
    }
    if (out.environment.is_object() && out.environment.contains("device") &&
        out.environment["device"].is_object()) {
      c.device_name = out.environment["device"].value("name", "");
    }
    const auto started = std::chrono::steady_clock::now();
    // Every seed, each run `repeat` times; each run judged. The record is of
    // the run that failed, else of the last: the base seed's last run, so a
    // passing case reads as a single-seed run of --seed would.
    const std::vector<std::uint64_t> seeds = CaseSeeds(spec);
    const int repeat = spec.only_seed ? 1 : spec.config.repeat;
    const int runs = static_cast<int>(seeds.size()) * repeat;
    std::vector<std::string> first_sha;  // this seed's run 1
    SeedComparison across_seeds;
    for (int run = 0; run < runs; ++run) {
      const std::uint64_t seed = seeds[static_cast<std::size_t>(run / repeat)];
      const int of_seed = run % repeat + 1;
      // The probe runs before the first case this call runs (seed §3).
      proto::RunCaseRequest request;
      request.index = i;
      request.seed = seed;
      request.probe = spec.config.probe && !probed;
      request.check_determinism = spec.config.probe_determinism;
      request.evidence = run == 0;  // runtime evidence and ghost replay: once per case
      probed = true;
      CallResult call = session.RunCase(request, spec.config.timeout_s);
      CaseOutcome trial;
      trial.index = i;
      trial.device_name = c.device_name;
      proto::RunCaseReply r;
      if (call.failure == CallFailure::kNone) {
        r = call.As<proto::RunCaseReply>();
        if (!r.input_desc.is_null()) trial.input_desc = r.input_desc;
        trial.probe = r.probe;
        if (!r.timings.is_null()) trial.timings = r.timings;
        trial.golden_device = r.golden_device;
        trial.golden_precision = r.golden_precision;
        trial.fallback_reason = r.fallback_reason;
        trial.warnings = r.warnings;
        trial.runtime_evidence = r.runtime_evidence;
        trial.regression_type = r.regression_type.value_or(0);
        trial.waivers = r.waivers.is_array() ? r.waivers : json::array();
      }
      std::string which;  // names the run in messages when there are several
      if (runs > 1) {
        which =
            (seeds.size() > 1 ? "seed " + std::to_string(seed) + (repeat > 1 ? ", " : "") : "") +
            (repeat > 1 ? "run " + std::to_string(of_seed) + " of " + std::to_string(repeat) : "") +
            ": ";
      }
      if (call.succeeded() && r.not_applicable) {
        // A generated case the task cannot build or its reference cannot run.
        trial.passed = true;
        trial.warnings.push_back("edge case " + c.edge_label +
                                 " not applicable: " + CutMiddle(*r.not_applicable, 500));
        trial.seed = seed;
        TakeRun(std::move(trial), run == 0, &c);
        break;
      }
      if (std::optional<CallError> error = session.Failed(call)) {
        trial.error_type = error->type;
        trial.error_msg = CutMiddle(which + error->message);
        spdlog::warn(
            "{} [case {}/{}] {}: {}", spec.name, i + 1, case_count, trial.error_type,
            TerminalLine(trial.error_msg, 200));  // one console line; the record keeps it all
        if (trial.error_type == "HiddenStateMismatch") {
          hidden_state_failure =
              "the hidden-state probe failed before case " + std::to_string(i + 1) +
              " (Model's state differs from ModelNew's, so no output can be judged): " +
              Utf8Prefix(error->message, 1000);
        }
      } else {
        JudgeOutputs(spec, out.non_compute, call, r, &trial);
        if (trial.fallback_reason) {
          spdlog::info("{} [case {}/{}] golden fell back to the device: {}", spec.name, i + 1,
                       case_count, *trial.fallback_reason);
        }
        if (!trial.passed) trial.error_msg = which + trial.error_msg;
        if (of_seed == 1) {
          first_sha = trial.actual_sha256;
        } else if (trial.passed) {
          // Stress runs: the seed's first run's outputs must come back bit for bit.
          for (std::size_t k = 0; k < trial.actual_sha256.size() && k < first_sha.size(); ++k) {
            if (trial.actual_sha256[k] == first_sha[k]) continue;
            trial.passed = false;
            trial.error_type = "Nondeterministic";
            trial.error_msg =
                which + "output " + std::to_string(k) + " differs bit for bit from run 1 (sha256 " +
                first_sha[k].substr(0, 16) + "... then " + trial.actual_sha256[k].substr(0, 16) +
                "...), though each run passed the judge";
            spdlog::warn("{} [case {}/{}] Nondeterministic: {}", spec.name, i + 1, case_count,
                         TerminalLine(trial.error_msg, 200));
            break;
          }
        }
        if (of_seed == 1) across_seeds.Add(seed, r.input_digest, trial.tensors);
      }
      trial.seed = seed;
      TakeRun(std::move(trial), run == 0, &c);
      if (!c.passed) break;
    }
    c.seeds.assign(seeds.begin(), seeds.end());
    for (const std::string& warning : across_seeds.Warnings()) {
      spdlog::warn("{} [case {}/{}] {}", spec.name, i + 1, case_count, warning);
      c.warnings.push_back(warning);
    }
    c.wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    finish(std::move(c));
  }
  return out;
}

CaseOutcome RunCaseAlone(const OperatorSpec& spec, RunOptions options, int index,
                         const std::function<void(const CaseOutcome&)>& on_case,
                         nlohmann::json* environment) {
  OperatorSpec alone = spec;
  alone.skip_case = [index](int i, const std::string&) { return i != index; };
  alone.config.lint = false;  // the original run already passed it,
  alone.config.runtime_checks =
      false;  // and its runtime evidence: the reruns are about the outputs
  options.pool = nullptr;
  OperatorOutcome outcome = RunOperator(alone, options, on_case);
  if (environment != nullptr) *environment = outcome.environment;
  if (!outcome.cases.empty()) return std::move(outcome.cases.front());
  CaseOutcome missing;
  missing.index = index;
  missing.error_type = "RuntimeError";
  missing.error_msg = "the case did not run again";
  return missing;
}

}  // namespace opverify
