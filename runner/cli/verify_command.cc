#include "runner/cli/verify_command.h"

#include <spdlog/spdlog.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <system_error>
#include <vector>

#include "runner/cli/library_flags.h"
#include "runner/cli/named_option.h"
#include "runner/cli/output_file.h"
#include "runner/cli/seed_compat.h"
#include "runner/common/failure_list.h"
#include "runner/common/failure_type.h"
#include "runner/common/strings.h"
#include "runner/common/terminal_text.h"
#include "runner/results/verify_result.h"
#include "runner/results/waivers.h"
#include "runner/usage/usage.h"
#include "runner/verify/compiler_cache.h"
#include "runner/verify/operator_run.h"

namespace fs = std::filesystem;

namespace opverify {

CLI::App* AddVerifyCommand(CLI::App& parent, VerifyArgs* args) {
  CLI::App* cmd = parent.add_subcommand("verify", "Verify one operator's implementation against its reference");
  OperatorConfig* config = &args->config;
  cmd->add_option("--op_name", args->op_name, "Operator name: the file prefix")->required();
  cmd->add_option("--verify_dir", args->verify_dir, "Folder with {op}_torch.py and {op}_{impl}.py");
  cmd->add_option("--triton_impl_name", args->triton_impl_name, "Implementation module suffix");
  cmd->add_option("--timeout", config->timeout_s,
                  "Seconds each case may take before it is stopped (Timeout); with --seed-compat, "
                  "the whole run")
      ->check(Seconds());
  cmd->add_option("--case", args->case_number,
                  "Run only case N, numbered from 1 as verify_result.json's case_idx (a sweep's "
                  "failure reproduced alone)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--output", args->output,
                  "verify_result.json path, or a folder (an existing one, or a path ending in /) "
                  "that gets verify_result.json and the executor log (default: in verify_dir)");
  // Given: true; not given: unset, so the task file's NON_COMPUTE decides.
  cmd->add_flag_callback("--non-compute", [config] { config->non_compute = true; },
                         "Data-movement operator: outputs must match bitwise");
  cmd->add_flag("--fresh-cache", args->fresh_cache,
                "Compile into a private temporary TRITON_CACHE_DIR (and TORCHINDUCTOR_CACHE_DIR)");
  cmd->add_flag("--keep-cache", args->keep_cache, "With --fresh-cache: keep that folder and print its path");
  cmd->add_option(
         "--cache-dir", args->cache_dir,
         "A persistent compiler cache (TRITON_CACHE_DIR DIR/triton, TORCHINDUCTOR_CACHE_DIR "
         "DIR/inductor), reused by later runs")
      ->excludes("--fresh-cache");
  cmd->add_option(
         "--warmup-timeout", config->warmup_timeout_s,
         "Seconds the operator may spend compiling and autotuning beyond --timeout (a hard cap)")
      ->check(FiniteRange(0, 604800));
  cmd->add_option("--backend", args->backend, "Where ModelNew runs")->check(CLI::IsMember({"auto", "cuda", "npu", "cpu"}));
  AddNamedOption(cmd, "--standard", &config->standard, ParseStandard, StandardName,
                 {"eco", "npu_benchmark", "mere_mare", "strict"}, "Precision standard");
  AddNamedOption(cmd, "--precision-mode", &config->precision_mode, ParsePrecisionMode, PrecisionModeName,
                 {"none", "hf32", "tf32"}, "hf32/tf32 float32 thresholds");
  cmd->add_flag_callback("--no-lint", [config] { config->lint = false; },
                         "Skip the static check (for implementations that are not Triton)");
  cmd->add_flag("--probe-determinism", config->probe_determinism, "Hidden-state probe P3: run Model twice");
  cmd->add_option("--seed", config->seed, "Seed of every RNG before inputs and models are built")
      ->check(UnsignedInteger());
  cmd->add_option("--repeat", config->repeat,
                  "Stress runs: each case N times, each judged; outputs differing bit for bit: Nondeterministic")
      ->check(CLI::Range(1, 1000));
  CLI::Option* seeds =
      cmd->add_option("--seeds", config->seeds,
                      "Input seeds per case (seed+1, ..., then --seed), each judged")
          ->check(CLI::Range(1, 100));
  cmd->add_flag("--seed-compat", args->seed_compat,
                "Behave as the seed's verify.py: no lint, one seed, --timeout for the whole run, "
                "AssertionError for shape/NaN/Inf mismatches, the seed's log lines on stdout")
      ->excludes(seeds);
  cmd->add_option("--golden-precision", config->golden_precision,
                  "fp64: the reference on inputs widened to float64, each output rounded once to its dtype")
      ->check(CLI::IsMember({"native", "fp64"}));
  cmd->add_flag("--edge-cases", config->edge_cases,
                "Also generated edge cases: sizes 0, 1, 2^k-1, 2^k, 2^k+1 of each size parameter; NaN/Inf inputs");
  cmd->add_flag_callback("--no-runtime-checks", [config] { config->runtime_checks = false; },
                         "Skip the runtime evidence (on with or without the lint): the profiler's own-kernel "
                         "check and the device operator trace");
  AddLibraryFlags(cmd, &config->library, &config->python_path);
  AddAllowTorchFlag(cmd, &args->allow_torch);
  cmd->add_flag("--ghost-replay", config->ghost_replay,
                "cuda: rerun with the @triton.jit kernels made no-ops; unchanged outputs fail");
  AddSandboxOptions(*cmd, &args->sandbox);
  return cmd;
}

namespace {

// Where verify_result.json goes: --output as a file, or in --output's folder
// (a repro's `--output DIR/`: nothing is written beside the operator's
// source), else in verify_dir as the seed writes it.
fs::path OutputFile(const std::string& output, const fs::path& verify_dir) {
  if (output.empty()) return verify_dir / "verify_result.json";
  std::error_code error;
  if (output.back() == '/' || fs::is_directory(output, error))
    return fs::path(output) / "verify_result.json";
  return output;
}

// The operator of verify_dir with the flags' settings; nullopt when its
// files are missing (exit 1: the seed's strict rule makes a missing file a
// failure), a name is bad or the sandbox cannot be had (exit 2).
std::optional<OperatorSpec> VerifySpec(const VerifyArgs& args, const fs::path& dir,
                                       int* exit_code) {
  Result<OperatorSpec> found = SpecFromVerifyDir(dir.string(), args.op_name, args.triton_impl_name);
  if (!found.ok()) {
    std::fprintf(stderr, "opverify verify: %s\n", found.status().message().c_str());
    *exit_code = found.status().code() == Status::Code::kNotFound ? 1 : 2;
    return std::nullopt;
  }
  if (Result<SandboxChoice> sandbox =
          ChooseSandbox(args.sandbox.mode, SandboxHelperBeside(DefaultExecutorProgram()));
      !sandbox.ok()) {
    std::fprintf(stderr, "opverify verify: %s\n", sandbox.status().message().c_str());
    *exit_code = 2;
    return std::nullopt;
  }
  OperatorSpec spec = std::move(found).value();
  spec.config = args.config;
  if (args.seed_compat) ApplySeedSettings(&spec.config);
  spec.config.python_path = AbsolutePaths(args.config.python_path);
  spec.config.allow_torch = AllowancesFromFlags(args.allow_torch);
  if (args.case_number > 0) {
    spec.skip_case = [wanted = args.case_number - 1](int i, const std::string&) {
      return i != wanted;
    };
  }
  return spec;
}

// The compiler cache the executors use: --fresh-cache's new private folder
// (its path in *fresh_dir, removed at the end unless --keep-cache), or
// --cache-dir's persistent one; neither: the executors' default. false
// when the folder cannot be made.
bool UseCompilerCache(const VerifyArgs& args, RunOptions* options, VerifyContext* context,
                      std::string* fresh_dir) {
  fs::path folder;
  if (args.fresh_cache) {
    std::string pattern = (fs::temp_directory_path() / "opverify_cache_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("opverify verify: creating a fresh cache folder");
      return false;
    }
    *fresh_dir = pattern;
    folder = pattern;
  } else if (!args.cache_dir.empty()) {
    folder = fs::absolute(args.cache_dir);
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) {
      std::fprintf(stderr, "opverify verify: --cache-dir %s: %s\n", folder.c_str(),
                   ec.message().c_str());
      return false;
    }
  } else {
    return true;
  }
  options->executor.env = CompilerCacheEnvironment(folder.string());
  context->cache_dir = (folder / "triton").string();
  return true;
}

// The console line of each finished case (--seed-compat: the seed's lines).
std::function<void(const CaseOutcome&)> PrintCase(const VerifyArgs& args) {
  return [&args](const CaseOutcome& c) {
    if (args.seed_compat) {
      PrintSeedCaseLines(c);
    } else if (c.waived()) {
      std::string allowed;
      for (const nlohmann::json& w : c.waivers)
        allowed += (allowed.empty() ? "" : "; ") + WaiverLine(w);
      spdlog::info("{} [case {}] waived: {}", args.op_name, c.index + 1, allowed);
    } else if (c.passed) {
      spdlog::info("{} [case {}] passed", args.op_name, c.index + 1);
    } else {
      spdlog::error("{} [case {}] {}", args.op_name, c.index + 1, c.error_type);
    }
  };
}

// The run's end on the console: the timed-out cases in the seed's words,
// the failed cases, stale allowances, the totals line. The exit code: 0
// when every case passed.
int PrintVerifyEnd(const VerifyArgs& args, const OperatorOutcome& outcome,
                   const nlohmann::ordered_json& result, const fs::path& output) {
  const int total = result["total_cases"].get<int>();
  const int passed = result["passed_cases"].get<int>();
  // The failed cases, numbered as verify_result.json's case_idx, then the
  // totals (--seed-compat: the seed's lines only, already printed per case).
  std::vector<FailedCase> failed;
  for (const CaseOutcome& c : outcome.cases) {
    if (!c.passed && !args.seed_compat)
      failed.push_back(
          {args.op_name + " case " + std::to_string(c.index + 1), c.error_type, c.error_msg, ""});
  }
  for (const std::string& line : FailureListLines(failed, kFailureListCap, output.string()))
    std::printf("%s\n", line.c_str());
  for (const auto& use : result["opverify"]["allow_torch"]) {
    if (use.value("state", "") == "stale") {
      std::fprintf(
          stderr, "opverify verify: warning: allowance %s (%s) was not needed by any case: stale\n",
          TerminalSafe(use.value("op", "")).c_str(),
          TerminalSafe(use.value("declared_at", "")).c_str());
    }
  }
  const int waived = outcome.waived_cases();
  std::printf("%s: %d/%d cases passed%s -> %s\n", TerminalSafe(args.op_name).c_str(), passed, total,
              waived > 0 ? Printf(" (%d waived: declared exceptions)", waived).c_str() : "",
              TerminalSafe(output.string()).c_str());
  return total > 0 && passed == total ? 0 : 1;
}

// The seed's words for a case that timed out, which its callers look for.
void PrintTimeouts(const VerifyArgs& args, const OperatorOutcome& outcome) {
  if (args.seed_compat) return;
  for (const CaseOutcome& c : outcome.cases) {
    if (FailureType::FromText(c.error_type) == FailureKind::kTimeout) {
      std::fprintf(stderr, "opverify verify: 验证超时 (%g 秒): case %d gave no reply in time\n",
                   args.config.timeout_s, c.index + 1);
    }
  }
}

// --fresh-cache's folder goes, unless --keep-cache keeps it (and says where).
void DropFreshCache(const VerifyArgs& args, const std::string& fresh_dir) {
  if (fresh_dir.empty()) return;
  if (args.keep_cache) {
    std::fprintf(stderr, "opverify verify: fresh cache kept at %s\n", fresh_dir.c_str());
  } else {
    std::error_code ec;
    fs::remove_all(fresh_dir, ec);
  }
}

// --seed-compat: --timeout is the whole run's. The seed's verify.py then
// prints the line its callers look for, exits 1 and writes no verify_result.json.
bool SeedRunTimedOut(const VerifyArgs& args, const std::optional<RunDeadline>& deadline) {
  if (!deadline || !deadline->expired()) return false;
  std::printf("验证超时\n");
  std::fprintf(stderr, "opverify verify: --seed-compat: the run took more than --timeout %g s\n",
               args.config.timeout_s);
  return true;
}

}  // namespace

int RunVerify(const VerifyArgs& args) {
  const fs::path dir = fs::absolute(args.verify_dir);
  int exit_code = 2;
  std::optional<OperatorSpec> spec = VerifySpec(args, dir, &exit_code);
  if (!spec) return exit_code;
  if (args.keep_cache && !args.fresh_cache)
    spdlog::warn("--keep-cache has no effect without --fresh-cache");
  RunOptions options;
  options.backend = args.backend;
  options.executor.sandbox = args.sandbox;
  VerifyContext context;
  context.impl_name = args.triton_impl_name;
  context.fresh_cache = args.fresh_cache;
  std::string fresh_dir;
  if (!UseCompilerCache(args, &options, &context, &fresh_dir)) return 2;
  // The seed's default is verify_dir/verify_result.json for every impl name;
  // the file `opverify bench` looks for with this impl name is written too.
  const fs::path output = fs::absolute(OutputFile(args.output, dir));
  std::vector<fs::path> outputs{output};
  const fs::path gate_file = dir / VerifyResultFileName(args.triton_impl_name);
  if (args.output.empty() && gate_file != output) outputs.push_back(gate_file);
  if (!MakeOutputFolder("verify", output)) return 2;
  options.executor.log_path =
      (output.parent_path() / (output.stem().string() + ".executor.log")).string();
  std::optional<RunDeadline> deadline;
  if (args.seed_compat) {
    deadline.emplace(args.config.timeout_s);
    options.executor.stop = deadline->stop();
    context.seed_compat = true;
  }
  OperatorOutcome outcome = RunOperator(*spec, options, PrintCase(args));
  if (SeedRunTimedOut(args, deadline)) return 1;
  deadline.reset();
  if (args.seed_compat) {
    for (CaseOutcome& c : outcome.cases) c.error_type = SeedErrorType(c.error_type);
  }
  if (args.case_number > 0 && outcome.cases.empty()) {
    std::fprintf(stderr, "opverify verify: --case %d: %s has %d cases (numbered from 1)\n",
                 args.case_number, args.op_name.c_str(), outcome.case_count);
    return 2;
  }
  const auto result = VerifyResultJson(outcome, context);
  for (const fs::path& path : outputs) {
    if (!WriteOutputJson("verify", path, result)) return 2;
  }
  PrintTimeouts(args, outcome);
  DropFreshCache(args, fresh_dir);
  return PrintVerifyEnd(args, outcome, result, output);
}

}  // namespace opverify
