// How a parent and its executor process talk (runner/executor/).
//
// Requests and replies are JSON messages on two pipes (channel.h framing).
// A reply's tensors travel as raw bytes in a memory file (memfd) the parent
// creates and the executor inherits: the reply lists each tensor's dtype,
// shape, byte offset and size. The executor only ever grows that file.
//
// Every request is a struct here, named after its "op", with its JSON
// mapping; kRequestNames lists them all, and tests/unit/protocol_test.cc
// checks that list against the handlers and the protocol comment of
// runner/executor/opverify_runtime/executor.py, the side that answers.
// Replies are read leniently (a field the executor left out keeps its
// default), as the executor tells what it had established before failing.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/executor/measure_settings.h"

namespace opverify::executor_protocol {

// File descriptors the executor finds open at start.
constexpr int kRequestFd = 3;  // parent -> executor
constexpr int kReplyFd = 4;    // executor -> parent
constexpr int kTensorFd = 5;   // the shared memory file

// ---- events: messages before a reply ----------------------------------
// While it handles a request, the executor may send {"event": "warmup",
// "state": "start"} and {"event": "warmup", "state": "end"} on the reply
// pipe: it began or ended compiling or autotuning (compile_clock.py). The
// parent keeps that time out of the call's timeout, within the operator's
// warm-up allowance (WarmupAllowance in executor_client.h). Any message
// with an "event" key is an event; the first one without is the reply.
inline constexpr std::string_view kEventKey = "event";
inline constexpr std::string_view kWarmupEvent = "warmup";

// ---- requests: {"op": kOp, fields...} ----------------------------------

// Imports the task and the implementation; the reply is a LoadReply.
struct LoadRequest {
  static constexpr std::string_view kOp = "load";
  std::string task_file, impl_file;
  std::string backend = "auto";
  std::uint64_t seed = 0;
  std::string golden_precision = "native";
  std::vector<nlohmann::json> params;  // a sweep; left out of the message when empty
  bool edge_cases = false;
  bool runtime_checks = false;
  bool ghost_replay = false;
  std::vector<std::string> library;  // packages whose kernels count as the implementation's own
  std::vector<std::string>
      python_path;  // folders put first on sys.path before anything is imported
  // A dispatch-override operator (docs/MANIFEST.md): the task and the
  // implementation are made from it, task_file and impl_file are empty.
  // Left out of the message when null.
  nlohmann::json override_spec;
  // The reference trust check: the task's Model stands in for ModelNew (on the
  // device, the implementation file not imported); left out of the message when false.
  bool reference_as_impl = false;
  // Declared exceptions (AllowancesToJson): the runtime evidence's torch
  // operators they cover are waived; left out of the message when empty.
  nlohmann::json allow_torch = nlohmann::json::array();
  // The trust boundary (docs/SECURITY.md): kRoleReference imports the task
  // alone and makes the goldens; kRoleImplementation imports the
  // implementation and ships its outputs alone; kRoleBoth is the old single
  // process (OPVERIFY_SHARED_GOLDEN=1, for measuring the boundary's cost).
  std::string role = "both";
};

inline constexpr std::string_view kRoleReference = "reference";
inline constexpr std::string_view kRoleImplementation = "implementation";
inline constexpr std::string_view kRoleBoth = "both";

// Each case's input_desc, for an operator that cannot run.
struct DescribeCasesRequest {
  static constexpr std::string_view kOp = "describe_cases";
};

// One run of case `index`; the reply's tensors are golden, actual per output.
struct RunCaseRequest {
  static constexpr std::string_view kOp = "run_case";
  int index = 0;
  std::uint64_t seed = 0;
  bool probe = false;              // the hidden-state probe first
  bool check_determinism = false;  // the probe also runs ModelNew twice
  bool evidence = true;            // runtime evidence and ghost replay (a case's first run)
  // To an implementation's executor, from the reference's reply: each
  // golden's element count (a larger output is refused before it is copied)
  // and the inputs the reference writes into (the implementation may too).
  std::vector<std::int64_t> golden_sizes;  // left out of the message when empty
  std::vector<std::string> reference_writes;
};

struct EnvironmentRequest {
  static constexpr std::string_view kOp = "environment";
};

struct LintRequest {
  static constexpr std::string_view kOp = "lint";
  std::string file;  // empty for a dispatch-override operator: there is no file of the user's
  bool non_compute = false;
  std::vector<std::string> library;
  std::vector<std::string> python_path;
  // "module:callable" entry points linted instead of ModelNew.forward (an
  // override's enable callables); left out of the message when empty.
  std::vector<std::string> entries;
  // The torch callable an override operator replaces ("torch.abs"): of a
  // registration table ((aten name, function), ...) the walk from the entries
  // follows the operator's own rows only; left out of the message when empty.
  std::string overrides;
  // Declared exceptions: the type-3 findings they cover are waived (the
  // result's "allow_torch"); left out of the message when empty.
  nlohmann::json allow_torch = nlohmann::json::array();
};

// Builds case `index`'s inputs and warms both sides up.
struct BenchPrepareRequest {
  static constexpr std::string_view kOp = "bench_prepare";
  int index = 0;
  std::uint64_t seed = 0;
  int warmup = 5;
  bool flush_l2 = true;
  bool skip_framework = false;
};

// Times one side of the prepared case.
struct BenchMeasureRequest {
  static constexpr std::string_view kOp = "bench_measure";
  std::string side = "implementation";  // or "framework"
  MeasureSettings timing;               // its fields travel at the message's top level
};

// Drops the prepared case's tensors.
struct BenchReleaseRequest {
  static constexpr std::string_view kOp = "bench_release";
};

// Ships `nbytes` bytes back (perf/executor_transfer.cc times the transfer).
struct BenchTransferRequest {
  static constexpr std::string_view kOp = "bench_transfer";
  std::int64_t nbytes = 0;
};

// The executor's pid: is it there.
struct PingRequest {
  static constexpr std::string_view kOp = "ping";
};

// Every request's op, in the order of the protocol comment in executor.py.
inline constexpr std::array<std::string_view, 10> kRequestNames = {
    LoadRequest::kOp,         DescribeCasesRequest::kOp, RunCaseRequest::kOp,
    EnvironmentRequest::kOp,  LintRequest::kOp,          BenchPrepareRequest::kOp,
    BenchMeasureRequest::kOp, BenchReleaseRequest::kOp,  BenchTransferRequest::kOp,
    PingRequest::kOp};

// The "op" of a request message; empty when it has none.
std::string RequestOp(const nlohmann::json& request);

void to_json(nlohmann::json& j, const LoadRequest& r);
void from_json(const nlohmann::json& j, LoadRequest& r);
void to_json(nlohmann::json& j, const DescribeCasesRequest& r);
void from_json(const nlohmann::json& j, DescribeCasesRequest& r);
void to_json(nlohmann::json& j, const RunCaseRequest& r);
void from_json(const nlohmann::json& j, RunCaseRequest& r);
void to_json(nlohmann::json& j, const EnvironmentRequest& r);
void from_json(const nlohmann::json& j, EnvironmentRequest& r);
void to_json(nlohmann::json& j, const LintRequest& r);
void from_json(const nlohmann::json& j, LintRequest& r);
void to_json(nlohmann::json& j, const BenchPrepareRequest& r);
void from_json(const nlohmann::json& j, BenchPrepareRequest& r);
void to_json(nlohmann::json& j, const BenchMeasureRequest& r);
void from_json(const nlohmann::json& j, BenchMeasureRequest& r);
void to_json(nlohmann::json& j, const BenchReleaseRequest& r);
void from_json(const nlohmann::json& j, BenchReleaseRequest& r);
void to_json(nlohmann::json& j, const BenchTransferRequest& r);
void from_json(const nlohmann::json& j, BenchTransferRequest& r);
void to_json(nlohmann::json& j, const PingRequest& r);
void from_json(const nlohmann::json& j, PingRequest& r);

// ---- replies ---------------------------------------------------------

// What every reply carries: {"ok"}, and on failure {"error_type",
// "error_msg", "device_poisoned"} besides what the request had established.
struct ReplyStatus {
  bool ok = false;
  std::string error_type;  // "ImportError", "DeviceError", "ExecutorTainted", ...
  std::string error_msg;
  bool device_poisoned = false;  // the device cannot serve another case: start a new executor
};

// The load's error_type when an earlier operator in this executor replaced
// part of torch: the parent starts a new executor instead of reusing it.
inline constexpr std::string_view kExecutorTainted = "ExecutorTainted";
// The error type when an implementation replaced the runtime's own code in
// its executor (runtime_seal.h): that executor's reply is not believed.
inline constexpr std::string_view kRuntimeTampered = "RuntimeTampered";
// The error type when the implementation's executor built other inputs for a
// case than the reference's executor did (their input digests differ).
inline constexpr std::string_view kInputMismatch = "InputMismatch";

// A tensor in the memory file; a reply lists them under "tensors".
struct TensorDescription {
  std::string dtype;  // torch's name without "torch.": "float32", "bfloat16"
  std::vector<std::int64_t> shape;
  std::int64_t offset = 0;  // bytes from the file's start (64-byte aligned)
  std::int64_t nbytes = 0;
};

struct EdgeCaseDescription {
  std::string label;                                 // "rows=1023", "nan_inf"
  nlohmann::json params = nlohmann::json::object();  // its get_inputs parameters
};

// Also what a failed load tells once the task's cases are counted.
struct LoadReply {
  int case_count = 0;  // the operator's own cases, then the edge cases
  std::string backend;
  std::vector<EdgeCaseDescription> edge_cases;
  bool non_compute = false;  // the task file's NON_COMPUTE
};

struct DescribeCasesReply {
  nlohmann::json input_descs = nlohmann::json::array();  // an array per case
};

// A run of a case; its tensors are golden, actual for each output (role
// both), the goldens alone (reference) or the actuals alone (implementation).
struct RunCaseReply {
  std::optional<std::string> not_applicable;  // a generated case the task cannot build
  nlohmann::json input_desc;                  // null when not told
  std::vector<std::string> input_dtypes;
  std::string input_digest;
  std::vector<std::string> warnings;
  std::string golden_device;
  std::string golden_precision = "native";
  std::optional<std::string> fallback_reason;  // the golden fell back from the CPU to the device
  nlohmann::json probe;                        // null unless the probe ran
  nlohmann::json runtime_evidence;             // null unless collected
  nlohmann::json timings;                      // null when not told
  std::optional<int> regression_type;
  // The declared exceptions the runtime evidence used: [{op, why, declared_at,
  // found: [...], ...}] (opverify_runtime/allowances.py); null when none.
  nlohmann::json waivers;
  // A reference executor's: what its RunCaseRequest to the implementation carries.
  std::vector<std::int64_t> golden_sizes;
  std::vector<std::string> writes_inputs;
};

struct EnvironmentReply {
  nlohmann::json environment;
};

struct LintReply {
  nlohmann::json lint;  // {"valid", "regression_type", "error"?, ...}
};

struct BenchPrepareReply {
  nlohmann::json input_desc = nlohmann::json::array();
  std::vector<std::string> input_dtypes;
  std::optional<double> bytes_moved;           // inputs and outputs, once
  std::optional<double> memory_bandwidth_gbs;  // the device's peak
};

struct BenchMeasureReply {
  std::string side;
  nlohmann::json stats = nlohmann::json::object();  // median_ms, mean_ms, ..., repeats, rse
  std::optional<double> peak_memory_mb, added_memory_mb;
  nlohmann::json operators;  // kernel -> ms per forward; null when not told
  std::vector<std::string> warnings;
};

struct PingReply {
  int pid = 0;
};

void to_json(nlohmann::json& j, const ReplyStatus& r);
void from_json(const nlohmann::json& j, ReplyStatus& r);
void to_json(nlohmann::json& j, const TensorDescription& r);
void from_json(const nlohmann::json& j, TensorDescription& r);
void to_json(nlohmann::json& j, const LoadReply& r);
void from_json(const nlohmann::json& j, LoadReply& r);
void to_json(nlohmann::json& j, const DescribeCasesReply& r);
void from_json(const nlohmann::json& j, DescribeCasesReply& r);
void to_json(nlohmann::json& j, const RunCaseReply& r);
void from_json(const nlohmann::json& j, RunCaseReply& r);
void to_json(nlohmann::json& j, const EnvironmentReply& r);
void from_json(const nlohmann::json& j, EnvironmentReply& r);
void to_json(nlohmann::json& j, const LintReply& r);
void from_json(const nlohmann::json& j, LintReply& r);
void to_json(nlohmann::json& j, const BenchPrepareReply& r);
void from_json(const nlohmann::json& j, BenchPrepareReply& r);
void to_json(nlohmann::json& j, const BenchMeasureReply& r);
void from_json(const nlohmann::json& j, BenchMeasureReply& r);
void to_json(nlohmann::json& j, const PingReply& r);
void from_json(const nlohmann::json& j, PingReply& r);

}  // namespace opverify::executor_protocol
