// Runs every case of one operator in executor processes and judges each
// output: the loop behind `opverify verify` and, next, each batch rank.
//
// Per operator: the lint (optional), then one executor that loads the task
// and implementation once and runs case after case. A case that crashes,
// hangs or poisons the device fails alone: the executor is replaced and the
// remaining cases run in the new one.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/utf8.h"  // CutMiddle, for error messages
#include "runner/config/operator_code.h"
#include "runner/config/operator_config.h"
#include "runner/executor/executor_client.h"
#include "runner/judge/judge.h"
#include "runner/results/operator_outcome.h"
#include "runner/tensor/tensor_view.h"

namespace opverify {

// One operator to run: its files and how it is judged.
struct OperatorSpec {
  std::string name;       // op_name
  OperatorCode code;      // <op>_torch.py and <op>_<impl>.py, or a dispatch override's object
  OperatorConfig config;  // how it is judged
  std::vector<nlohmann::json> params;  // a sweep: one get_inputs(**params) per case
  // Cases to leave out (resumed, or another rank's share); they are not
  // reported. `edge_label` is a generated edge case's label, else empty.
  std::function<bool(int index, const std::string& edge_label)> skip_case;
  // The reference trust check's device run: the task's Model runs as the
  // implementation (runner/verify/reference_trust.h); never set by a user.
  bool reference_as_impl = false;
  // The A/B's trust reruns: each case runs once, with this seed alone (the
  // failing run's), the load seed unchanged; unset: config.seed and config.seeds.
  std::optional<std::uint64_t> only_seed;
  // Cases to leave out by their inputs (opverify-batch --dtype): asked once
  // the task is loaded, with each case's input_desc as the executor describes it.
  std::function<bool(int index, const std::string& edge_label, const nlohmann::json& input_desc)>
      skip_by_inputs;
};

// Whether the environment variable `name` is "1" (the measurement switches below).
bool EnvironmentFlag(const char* name);

// OPVERIFY_SHARED_GOLDEN=1: the golden made in the implementation's own
// (pooled) executor, as before the trust boundary (docs/SECURITY.md). Only
// for measuring what the boundary costs (perf/trust_cost.py).
bool SharedGoldenFromEnvironment();

// When an operator's session starts the rank's next spare implementation
// executor (ExecutorPool; docs/PERFORMANCE.md, "The spare executor").
enum class SparePrestart {
  kNever,    // OPVERIFY_NO_SPARE=1 (perf/trust_cost.py's baseline), or no pool
  kOnOpen,   // as it takes its own: the verification
  kOnClose,  // once it is done: the benchmark, so no start runs beside a timed kernel
};
// kNever when OPVERIFY_NO_SPARE=1, else kOnOpen.
SparePrestart SparePrestartFromEnvironment();

// false when OPVERIFY_NO_PRELOAD=1 (perf/preload_cost.py's baseline): spare
// implementation executors then import nothing of the library before their load.
bool PreloadFromEnvironment();

struct RunOptions {
  std::string backend = "auto";  // auto, cuda, npu, cpu
  // How every executor starts: its program, environment (cache dirs,
  // devices), log, sandbox, scratch folder, and the run's stop signal (a
  // call in flight is abandoned, its executor killed, and its case ends
  // kStoppedErrorType, which callers do not record).
  ExecutorOptions executor;
  ExecutorPool* pool = nullptr;     // reuse a warm reference executor across operators (batch ranks)
  // One executor makes both the golden and the actual (SharedGoldenFromEnvironment);
  // false: the trust boundary, a reference and an implementation executor.
  bool shared_golden = SharedGoldenFromEnvironment();
  SparePrestart prestart = SparePrestartFromEnvironment();  // needs pool; never with shared_golden
  // Spare implementation executors import the operator's library as they
  // start (OperatorConfig::preload; docs/PERFORMANCE.md): only where spares serve.
  bool preload = PreloadFromEnvironment();
  ExecutorFactory start_executor;  // empty: ProcessExecutor::StartClient (tests give a fake)
};

// The error type of a case abandoned because the run was stopped.
inline constexpr std::string_view kStoppedErrorType = "Stopped";

// The seed scripts' layout: <dir>/<op>_torch.py and <dir>/<op>_<impl>.py.
// A Status naming the missing file when either is not there.
Result<OperatorSpec> SpecFromVerifyDir(const std::string& dir, const std::string& op_name, const std::string& impl_name);

// Calls on_case (if set) after each case, in order, while its tensors are valid.
OperatorOutcome RunOperator(const OperatorSpec& spec, const RunOptions& options,
                            const std::function<void(const CaseOutcome&)>& on_case = nullptr);

// Case `index` alone in a new executor of its own (never options.pool's), the
// lint off (the original run passed it): the A/B's reruns. A case that did
// not run again comes back as a RuntimeError. `environment`, if set, gets the
// executor's fingerprint.
CaseOutcome RunCaseAlone(const OperatorSpec& spec, RunOptions options, int index,
                         const std::function<void(const CaseOutcome&)>& on_case = nullptr,
                         nlohmann::json* environment = nullptr);

}  // namespace opverify
