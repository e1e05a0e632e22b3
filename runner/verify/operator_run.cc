#include "runner/verify/operator_run.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "runner/common/failure_type.h"
#include "runner/common/strings.h"
#include "runner/common/terminal_text.h"
#include "runner/common/user_file.h"
#include "runner/judge/element_reader.h"

#include "runner/executor/executor_client.h"
#include "runner/results/waivers.h"
#include "runner/verify/case_runs.h"
#include "runner/verify/degenerate_reference.h"
#include "runner/verify/executor_session.h"

namespace opverify {
namespace {

using nlohmann::json;
namespace proto = executor_protocol;

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
  lint.file = spec.code.impl_file;
  lint.non_compute = non_compute;
  lint.library = spec.config.library;
  lint.python_path = spec.config.python_path;
  lint.allow_torch = AllowancesToJson(spec.config.allow_torch);
  const json enable = spec.code.override_spec.is_object()
                          ? spec.code.override_spec.value("enable", json())
                          : json();
  if (enable.is_string()) lint.entries.push_back(enable.get<std::string>());
  if (enable.is_object()) lint.entries = {enable.value("enter", ""), enable.value("exit", "")};
  if (!lint.entries.empty()) lint.overrides = spec.code.override_spec.value("op", "");
  return lint;
}

// A stopped run records nothing of what it abandoned (--resume runs it).
bool Stopped(const CallResult& call) { return CallErrorType(call) == kStoppedErrorType; }

// The lint's verdict on an invalid file: its regression type (0: an
// unreadable file or a syntax error, which has no type but an "error") and why.
std::pair<int, std::string> LintFailure(const json& lint) {
  const int type = lint.contains("regression_type") && lint["regression_type"].is_number_integer()
                       ? lint["regression_type"].get<int>()
                       : 0;
  const std::string why =
      lint.contains("error") && lint["error"].is_string()
          ? lint["error"].get<std::string>()
          : "regression type " + std::to_string(type) + FirstViolation(lint, type);
  return {type, why};
}

// One operator's verification, step by step: load it, lint it, ask its
// environment, then run and judge each case, restarting the executor
// after a case that ended it. Each case reaches on_case (and the outcome)
// through Finish.
class OperatorRun {
 public:
  OperatorRun(const OperatorSpec& spec, const RunOptions& options,
              const std::function<void(const CaseOutcome&)>& on_case)
      : spec_(spec), options_(options), on_case_(on_case), session_(spec, options) {
    out_.op_name = spec.name;
    out_.declared_allowances = AllowancesToJson(spec.config.allow_torch);
  }

  // false: the operator cannot run; its cases failed with the load's error
  // (none recorded when the run was stopped).
  bool Load();
  // false: the lint failed every case (or the run was stopped during it).
  bool Lint();
  void ReadEnvironment();
  void RunCases();
  OperatorOutcome TakeOutcome() { return std::move(out_); }

 private:
  const OperatorOutcome::EdgeCase* EdgeOf(int i) const {
    return i >= out_.own_cases && i < case_count_
               ? &out_.edge_cases[static_cast<std::size_t>(i - out_.own_cases)]
               : nullptr;
  }
  std::string LabelOf(int i) const {
    return EdgeOf(i) != nullptr ? EdgeOf(i)->label : std::string();
  }
  bool Skipped(int i) const {
    return (spec_.skip_case && spec_.skip_case(i, LabelOf(i))) ||
           (spec_.skip_by_inputs &&
            spec_.skip_by_inputs(i, LabelOf(i),
                                 OperatorSession::InputDescAt(described_inputs_, i)));
  }
  json DescribeCases() { return case_count_ > 0 ? session_.DescribeCases() : json::array(); }
  void Finish(CaseOutcome c);
  // Every case from `from` on (at least one) fails with this error.
  void FailAll(int from, const std::string& type, const std::string& message, int regression = 0,
               const json& input_descs = json::array());
  CaseOutcome RunCase(int i);
  // The request of one run of case i with `seed` (the probe before the first case run).
  proto::RunCaseRequest Request(int i, std::uint64_t seed, bool first_run);
  // One run's outcome from a call that failed; a failed hidden-state probe fails the cases after
  // it.
  void TakeFailure(const CallError& error, const std::string& which, CaseOutcome* trial);
  // The case's record before its runs: its index, edge case and device.
  CaseOutcome NewCase(int i) const;
  // One run that replied, judged; a stress run's outputs (not the seed's
  // first) also checked bit for bit against *first_sha, which the first sets.
  void JudgeRun(const CallResult& call, const proto::RunCaseReply& r, const std::string& which,
                bool first_of_seed, std::vector<std::string>* first_sha, CaseOutcome* trial);

  const OperatorSpec& spec_;
  const RunOptions& options_;
  const std::function<void(const CaseOutcome&)>& on_case_;
  OperatorSession session_;
  OperatorOutcome out_;
  int case_count_ = 0;
  json described_inputs_ = json::array();  // for spec.skip_by_inputs
  json lint_waivers_ = json::array();      // what the lint waived holds for every case
  bool probed_ = false;
  std::string hidden_state_failure_;  // once the probe fails, no case can be judged
};

bool OperatorRun::Load() {
  CallResult loaded = session_.Open();
  out_.startup = session_.startup();
  // What the load told, also when it failed after counting the cases.
  const auto load = loaded.As<proto::LoadReply>();
  case_count_ = load.case_count;
  // A load that failed before any process counted the cases: a sweep's are
  // known here, and each fails (not only the first).
  if (!loaded.succeeded() && case_count_ == 0) case_count_ = static_cast<int>(spec_.params.size());
  out_.case_count = case_count_;
  // The generated edge cases come after the operator's own, labelled (a
  // load that failed once they were made still names them).
  for (const auto& edge : load.edge_cases) out_.edge_cases.push_back({edge.label, edge.params});
  out_.own_cases = case_count_ - static_cast<int>(out_.edge_cases.size());
  if (spec_.skip_by_inputs && case_count_ > 0) described_inputs_ = session_.DescribeCases();
  out_.non_compute = spec_.config.non_compute.value_or(load.non_compute);
  out_.non_compute_given = spec_.config.non_compute.value_or(false);
  if (loaded.succeeded()) return true;
  if (Stopped(loaded)) return false;
  session_.Spoil();
  spdlog::error("{}: load failed: {}", spec_.name, CallErrorMessage(loaded));
  FailAll(0, CallErrorType(loaded), CallErrorMessage(loaded), 0, DescribeCases());
  return false;
}

bool OperatorRun::Lint() {
  if (!spec_.config.lint) return true;
  // In the executor that never imports the implementation: nothing it ran could change the lint.
  CallResult lint =
      session_.reference()->Call(LintRequestFor(spec_, out_.non_compute), spec_.config.timeout_s);
  if (!lint.succeeded()) {
    if (!Stopped(lint)) FailAll(0, CallErrorType(lint), "lint: " + CallErrorMessage(lint));
    return false;
  }
  out_.lint = lint.As<proto::LintReply>().lint;
  // What the declared exceptions covered holds for every case, failed or not.
  if (out_.lint.contains("allow_torch") && out_.lint["allow_torch"].is_object())
    lint_waivers_ = out_.lint["allow_torch"].value("waived", json::array());
  if (!out_.lint.value("valid", false)) {
    session_.Spoil();
    const auto [type, why] = LintFailure(out_.lint);
    spdlog::warn("{}: lint: {}", spec_.name, why);
    FailAll(0, std::string(FailureKindName(FailureKind::kLintError)), why + ": " + out_.lint.dump(),
            type, DescribeCases());
    return false;
  }
  for (const json& waiver : lint_waivers_)
    spdlog::info("{}: lint: waived by a declared exception: {}", spec_.name, WaiverLine(waiver));
  return true;
}

void OperatorRun::ReadEnvironment() {
  out_.environment = session_.Environment();
  if (const std::string sandbox = session_.implementation()->sandbox_mode();
      !sandbox.empty() && out_.environment.is_object()) {
    out_.environment["sandbox"] =
        sandbox;  // docs/SECURITY.md: "none" when nothing confined the executor
  }
}

void OperatorRun::RunCases() {
  for (int i = 0; i < case_count_; ++i) {
    if (options_.executor.stop != nullptr && options_.executor.stop->load() != 0) break;
    if (Skipped(i)) continue;
    if (!hidden_state_failure_.empty()) {
      CaseOutcome c;
      c.index = i;
      c.error_type = FailureKindName(FailureKind::kHiddenStateMismatch);
      c.error_msg = hidden_state_failure_;
      Finish(std::move(c));
      continue;
    }
    if (std::optional<CallError> restart = session_.Reopen()) {
      FailAll(i, restart->type, restart->message, 0, DescribeCases());
      return;
    }
    Finish(RunCase(i));
  }
}

void OperatorRun::Finish(CaseOutcome c) {
  c.case_count = case_count_;
  MergeWaivers(&c.waivers, lint_waivers_);
  c.environment = &out_.environment;
  if (on_case_) on_case_(c);
  c.tensors.clear();  // they point into the executor's memory, valid until its next call
  c.environment = nullptr;
  out_.cases.push_back(std::move(c));
}

void OperatorRun::FailAll(int from, const std::string& type, const std::string& message,
                          int regression, const json& input_descs) {
  for (int i = from; i < std::max(case_count_, from == 0 ? 1 : from); ++i) {
    if (Skipped(i)) continue;
    CaseOutcome c;
    c.index = i;
    c.input_desc = OperatorSession::InputDescAt(input_descs, i);
    c.error_type = type;
    c.error_msg = CutMiddle(message);
    c.regression_type = regression;
    Finish(std::move(c));
  }
}

// Every seed, each run `repeat` times; each run judged. The record is of
// the run that failed, else of the last: the base seed's last run, so a
// passing case reads as a single-seed run of --seed would.
CaseOutcome OperatorRun::RunCase(int i) {
  CaseOutcome c = NewCase(i);
  const auto started = std::chrono::steady_clock::now();
  const std::vector<std::uint64_t> seeds = CaseSeeds(spec_);
  const int repeat = spec_.only_seed ? 1 : spec_.config.repeat;
  const int runs = static_cast<int>(seeds.size()) * repeat;
  std::vector<std::string> first_sha;  // this seed's run 1
  SeedComparison across_seeds;
  for (int run = 0; run < runs; ++run) {
    const std::uint64_t seed = seeds[static_cast<std::size_t>(run / repeat)];
    const int of_seed = run % repeat + 1;
    CallResult call = session_.RunCase(Request(i, seed, run == 0), spec_.config.timeout_s);
    CaseOutcome trial;
    trial.index = i;
    trial.device_name = c.device_name;
    proto::RunCaseReply r;
    if (call.failure == CallFailure::kNone) {
      r = call.As<proto::RunCaseReply>();
      TakeReply(r, &trial);
    }
    const std::string which = RunName(seeds.size(), repeat, seed, of_seed);
    trial.seed = seed;
    if (call.succeeded() && r.not_applicable) {
      // A generated case the task cannot build or its reference cannot run.
      trial.passed = true;
      trial.warnings.push_back("edge case " + c.edge_label +
                               " not applicable: " + CutMiddle(*r.not_applicable, 500));
      TakeRun(std::move(trial), run == 0, &c);
      break;
    }
    if (std::optional<CallError> error = session_.Failed(call)) {
      TakeFailure(*error, which, &trial);
    } else {
      JudgeRun(call, r, which, of_seed == 1, &first_sha, &trial);
      if (of_seed == 1) across_seeds.Add(seed, r.input_digest, trial.tensors);
    }
    TakeRun(std::move(trial), run == 0, &c);
    if (!c.passed) break;
  }
  c.seeds.assign(seeds.begin(), seeds.end());
  for (const std::string& warning : across_seeds.Warnings()) {
    spdlog::warn("{} [case {}/{}] {}", spec_.name, i + 1, case_count_, warning);
    c.warnings.push_back(warning);
  }
  c.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return c;
}

proto::RunCaseRequest OperatorRun::Request(int i, std::uint64_t seed, bool first_run) {
  // The probe runs before the first case this call runs (seed §3).
  proto::RunCaseRequest request;
  request.index = i;
  request.seed = seed;
  request.probe = spec_.config.probe && !probed_;
  request.check_determinism = spec_.config.probe_determinism;
  request.evidence = first_run;  // runtime evidence and ghost replay: once per case
  probed_ = true;
  return request;
}

void OperatorRun::TakeFailure(const CallError& error, const std::string& which,
                              CaseOutcome* trial) {
  trial->error_type = error.type;
  trial->error_msg = CutMiddle(which + error.message);
  spdlog::warn("{} [case {}/{}] {}: {}", spec_.name, trial->index + 1, case_count_,
               trial->error_type,
               TerminalLine(trial->error_msg, 200));  // one console line; the record keeps it all
  if (FailureType::FromText(trial->error_type) == FailureKind::kHiddenStateMismatch) {
    hidden_state_failure_ =
        "the hidden-state probe failed before case " + std::to_string(trial->index + 1) +
        " (Model's state differs from ModelNew's, so no output can be judged): " +
        Utf8Prefix(error.message, 1000);
  }
}

CaseOutcome OperatorRun::NewCase(int i) const {
  CaseOutcome c;
  c.index = i;
  if (const OperatorOutcome::EdgeCase* edge = EdgeOf(i)) {
    c.edge_label = edge->label;
    c.edge_params = edge->params;
  }
  if (out_.environment.is_object() && out_.environment.contains("device") &&
      out_.environment["device"].is_object()) {
    c.device_name = out_.environment["device"].value("name", "");
  }
  return c;
}

void OperatorRun::JudgeRun(const CallResult& call, const proto::RunCaseReply& r,
                           const std::string& which, bool first_of_seed,
                           std::vector<std::string>* first_sha, CaseOutcome* trial) {
  JudgeOutputs(spec_, out_.non_compute, call, r, trial);
  if (trial->fallback_reason) {
    spdlog::info("{} [case {}/{}] golden fell back to the device: {}", spec_.name, trial->index + 1,
                 case_count_, *trial->fallback_reason);
  }
  if (!trial->passed) trial->error_msg = which + trial->error_msg;
  if (first_of_seed) {
    *first_sha = trial->actual_sha256;
    return;
  }
  if (!trial->passed) return;
  CheckSameBits(*first_sha, which, trial);
  if (!trial->passed) {
    spdlog::warn("{} [case {}/{}] Nondeterministic: {}", spec_.name, trial->index + 1, case_count_,
                 TerminalLine(trial->error_msg, 200));
  }
}

}  // namespace

bool EnvironmentFlag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && std::string(value) == "1";
}

bool SharedGoldenFromEnvironment() { return EnvironmentFlag("OPVERIFY_SHARED_GOLDEN"); }

bool PreloadFromEnvironment() { return !EnvironmentFlag("OPVERIFY_NO_PRELOAD"); }

SparePrestart SparePrestartFromEnvironment() {
  return EnvironmentFlag("OPVERIFY_NO_SPARE") ? SparePrestart::kNever : SparePrestart::kOnOpen;
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
  spec.code.task_file = (folder / (op_name + "_torch.py")).string();
  spec.code.impl_file = (folder / (op_name + "_" + impl_name + ".py")).string();
  spec.code.impl_name = impl_name;
  for (const auto& file : {spec.code.task_file, spec.code.impl_file}) {
    if (Status regular = CheckRegularFile(file, "file"); !regular.ok()) return regular;
  }
  return spec;
}

OperatorOutcome RunOperator(const OperatorSpec& spec, const RunOptions& options,
                            const std::function<void(const CaseOutcome&)>& on_case) {
  OperatorRun run(spec, options, on_case);
  if (run.Load() && run.Lint()) {
    run.ReadEnvironment();
    run.RunCases();
  }
  return run.TakeOutcome();
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
  missing.error_type = FailureKindName(FailureKind::kRuntimeError);
  missing.error_msg = "the case did not run again";
  return missing;
}

}  // namespace opverify
