// How one operator is judged: the one home of these settings and their
// defaults. A manifest entry (runner/manifest), `opverify verify`'s flags
// (runner/cli/verify_command.cc) and the batch fill this struct; the
// operator loop (runner/verify/operator_run.h) reads it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/status.h"
#include "runner/judge/standards.h"

namespace opverify {

// A declared exception (docs/MANIFEST.md, "Declared exceptions"): a torch
// operator the implementation or its library uses outside its Triton kernels by
// design. The executor matches findings against it (opverify_runtime/allowances.py);
// a case whose only violations it covers passes as "waived".
struct TorchAllowance {
  std::string op;           // as declared: "aten::sort", "torch.sort", "Tensor.sort"
  std::string why;          // never empty: an exception must be explained
  std::string where;        // optional: the file or package path the use must come from
  std::string library;      // a library's allowance: its package (covers that package's files only)
  std::string declared_at;  // where it was declared: "jobs/x.json:/operators/2/allow_torch/0",
                            // "--allow-torch ..."
};

// The executor's form: [{"op", "why", "where"?, "library"?, "declared_at"}].
nlohmann::json AllowancesToJson(const std::vector<TorchAllowance>& allowances);

// A manifest's "allow_torch" list (schemas/jobs.schema.json has checked it),
// each entry's declared_at "<declared_at>/<i>". InvalidInput naming the entry
// for a "why" that is only blanks, or an entry that repeats another's op and where.
Result<std::vector<TorchAllowance>> ParseAllowances(const nlohmann::json& list,
                                                    const std::string& declared_at,
                                                    const std::string& library = "");

// "aten::sort", "aten::sort.stable", "torch.sort", "torch.nn.functional.gelu",
// "Tensor.sum": a name an allowance may give (the schema's pattern).
bool IsTorchOperatorName(const std::string& op);

// `--allow-torch OP=WHY` (opverify verify, opverify lint). InvalidInput saying
// the form when there is no '=', no operator or no reason.
Result<TorchAllowance> ParseAllowanceFlag(const std::string& text);

struct OperatorConfig {
  std::optional<bool> non_compute;  // unset: the task file's NON_COMPUTE, else false
  Standard standard = Standard::kEco;
  PrecisionMode precision_mode = PrecisionMode::kNone;
  double timeout_s = 900;  // per case
  // Per operator: time its executors spend compiling or autotuning, kept out
  // of timeout_s until spent (a hard cap, whatever the executor claims).
  double warmup_timeout_s = 1800;
  bool lint = true;
  bool runtime_checks = true;  // own Triton kernels in the profile, allowed torch operators (lint or not)
  bool ghost_replay = false;   // cuda: outputs must change with the @triton.jit kernels made no-ops
  bool probe = true;           // hidden-state probe before the first case (no manifest key, no flag)
  bool probe_determinism = false;  // the probe runs Model twice (no manifest key)
  int repeat = 1;  // runs per case: each judged; outputs that differ bit for bit make it Nondeterministic
  std::uint64_t seed = 0;  // seeds every RNG before inputs and models are built (no manifest key)
  int seeds = 3;  // input seeds per case (seed+1, ..., seed+seeds-1, then seed), each judged
  std::string golden_precision = "native";  // or "fp64": the reference on float64 inputs, rounded once
  bool edge_cases = false;  // generated edge cases after the operator's own (the executor makes them)
  // Top-level packages whose Triton kernels count as the implementation's own
  // (lint types 1, 2, 4 and the runtime evidence; type 3 still applies to them).
  std::vector<std::string> library;
  // Absolute folders put first on the executor's sys.path (a library carried as source).
  std::vector<std::string> python_path;
  // What a spare implementation executor imports as it starts, before it is
  // handed an operator (docs/MANIFEST.md, "preload"): unset, the library's
  // packages; empty, nothing. Each a library package or a submodule of one.
  std::optional<std::vector<std::string>> preload;
  std::vector<std::string> PreloadModules() const { return preload ? *preload : library; }
  // Declared exceptions: the operator's own, then its libraries' (no manifest
  // key of ApplyManifestFields: the manifest knows where each was declared).
  std::vector<TorchAllowance> allow_torch;
};

// Each of config.PreloadModules() is a library package or a submodule of
// one; else an error naming it, at `where`.
Status CheckPreload(const OperatorConfig& config, const std::string& where);

// A manifest entry's fields (defaults already merged in; schemas/jobs.schema.json
// has checked them) over `config`: each key that is present replaces its field.
// The keys are the fields' names (docs/MANIFEST.md). `where` names the entry
// in messages. `python_path` is taken as given: the manifest makes it absolute.
// The result must pass CheckPreload (its error, else Ok).
Status ApplyManifestFields(const nlohmann::json& fields, const std::string& where, OperatorConfig* config);

}  // namespace opverify
