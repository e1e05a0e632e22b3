#include "runner/cli/bench_command.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>

#include "runner/bench/clock_lock.h"
#include "runner/bench/operator_bench.h"
#include "runner/cli/library_flags.h"
#include "runner/cli/output_file.h"
#include "runner/results/perf_result.h"
#include "runner/results/verify_result.h"
#include "runner/usage/usage.h"

namespace fs = std::filesystem;

namespace opverify {

using nlohmann::json;

CLI::App* AddBenchCommand(CLI::App& parent, BenchArgs* args) {
  CLI::App* cmd = parent.add_subcommand("bench", "Benchmark one verified operator: framework against implementation");
  BenchConfig* bench = &args->bench;
  cmd->add_option("--op_name", args->op_name, "Operator name: the file prefix")->required();
  cmd->add_option("--verify_dir", args->verify_dir, "Folder with {op}_torch.py, {op}_{impl}.py and the verify result");
  cmd->add_option("--triton_impl_name", args->triton_impl_name, "Implementation module suffix");
  cmd->add_option("--warmup", bench->warmup, "Warm-up forwards per side and shape")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--repeats", bench->timing.repeats,
                  "Timed forwards per side and shape (the minimum with --adaptive)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--output", args->output, "perf_result.json path (default: in verify_dir)");
  cmd->add_flag("--verify_not_required", args->verify_not_required, "Skip the L1 verify gate");
  cmd->add_flag("--skip_framework", bench->skip_framework, "Do not time Model (give --framework_latency_ms)");
  cmd->add_option(
         "--framework_latency_ms", bench->framework_latency_ms,
         "With --skip_framework: the framework's latency every speedup is computed against")
      ->check(CLI::PositiveNumber & FiniteRange(0, 1e9));
  cmd->add_flag("--lock-frequency,!--no-lock-frequency", args->lock_frequency,
                "Lock the device clock first (opt-in; needs root), and watch it; --no-lock-frequency: neither");
  cmd->add_option("--lock-frequency-fail-action", args->lock_frequency_fail_action,
                  "When locking fails or the clock drifts: warn, or error (exit 1)")
      ->check(CLI::IsMember({"warn", "error"}));
  cmd->add_option("--freq-check-interval", args->freq_check_interval,
                  "Seconds between clock samples (0: none)")
      ->check(FiniteRange(0, 3600));
  cmd->add_option("--timeout", args->operator_config.timeout_s,
                  "Seconds a shape's preparation or timing may take")
      ->check(Seconds());
  cmd->add_option("--backend", args->backend, "Where both sides run")->check(CLI::IsMember({"auto", "cuda", "npu", "cpu"}));
  cmd->add_flag("--adaptive", bench->timing.adaptive,
                "Repeat until the relative standard error is under --rse-target");
  cmd->add_option("--max-repeats", bench->timing.max_repeats,
                  "With --adaptive: at most this many (default 20 x --repeats)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--rse-target", bench->timing.rse_target,
                  "With --adaptive: the relative standard error to reach")
      ->check(FiniteRange(1e-6, 1.0));
  cmd->add_flag_callback("--no-flush", [bench] { bench->flush_l2 = false; },
                         "Do not flush the L2 cache before each repeat");
  cmd->add_option("--profile-iterations", bench->timing.profile_iterations,
                  "Forwards profiled for the per-kernel breakdown")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--drift-tolerance", args->drift_tolerance,
                  "Clock drift from the warmed-up clock that warns")
      ->check(FiniteRange(0.0, 1.0));
  cmd->add_option("--seed", args->operator_config.seed,
                  "Seed of every RNG before inputs and models are built")
      ->check(UnsignedInteger());
  AddLibraryFlags(cmd, &args->operator_config.library, &args->operator_config.python_path);
  AddSandboxOptions(*cmd, &args->sandbox);
  return cmd;
}

int RunBench(const BenchArgs& args) {
  const fs::path dir = fs::absolute(args.verify_dir);
  // The gate first (exit 2: run verify first); past it, missing operator
  // files are the seed's "the script itself failed" (exit 1).
  if (!args.verify_not_required) {
    const VerifyGate gate = CheckVerifyGate((dir / VerifyResultFileName(args.triton_impl_name)).string());
    if (!gate.open) {
      std::fprintf(stderr, "opverify bench: L1 verify gate closed: %s\n", gate.reason.c_str());
      return 2;
    }
  }
  Result<OperatorSpec> found = SpecFromVerifyDir(dir.string(), args.op_name, args.triton_impl_name);
  if (!found.ok()) {
    std::fprintf(stderr, "opverify bench: %s\n", found.status().message().c_str());
    return 1;
  }
  if (Result<SandboxChoice> sandbox =
          ChooseSandbox(args.sandbox.mode, SandboxHelperBeside(DefaultExecutorProgram()));
      !sandbox.ok()) {
    std::fprintf(stderr, "opverify bench: %s\n", sandbox.status().message().c_str());
    return 2;
  }
  OperatorSpec spec = std::move(found).value();
  spec.config = args.operator_config;
  spec.config.python_path = AbsolutePaths(args.operator_config.python_path);
  if (args.bench.skip_framework && !args.bench.framework_latency_ms) {
    spdlog::warn("--skip_framework without --framework_latency_ms: no speedup can be computed");
  }
  const fs::path output =
      fs::absolute(args.output.empty() ? dir / PerfResultFileName(args.triton_impl_name) : fs::path(args.output));
  if (!MakeOutputFolder("bench", output)) return 1;

  RunOptions options;
  options.backend = args.backend;
  options.executor.sandbox = args.sandbox;
  options.executor.log_path =
      (output.parent_path() / (output.stem().string() + ".executor.log")).string();

  // --no-lock-frequency: no lock and no watching (the seed's meaning);
  // default: watch only; --lock-frequency: lock, then watch.
  const bool watch = !(args.lock_frequency.has_value() && !*args.lock_frequency) && args.freq_check_interval > 0;
  const bool lock = args.lock_frequency.value_or(false);
  std::vector<std::string> clock_problems;
  json locked_device;
  const ClockOpener watch_clock = DeviceClockOpener(args.freq_check_interval, args.drift_tolerance);
  ClockOpener opener = [&](const json& environment) -> std::unique_ptr<ClockMonitor> {
    const json device = environment.is_object() ? environment.value("device", json::object()) : json::object();
    if (lock) {
      Result<std::string> locked = LockDeviceClock(device);
      if (locked.ok()) {
        spdlog::info("{}", locked.value());
        locked_device = device;
      } else {
        clock_problems.push_back(locked.status().ToString());
        spdlog::warn("clock not locked: {}", locked.status().ToString());
      }
    }
    return watch ? watch_clock(environment) : nullptr;
  };

  OperatorBenchResult result = BenchOperator(spec, options, args.bench, opener);
  if (!locked_device.is_null()) spdlog::info("clock unlock: {}", UnlockDeviceClock(locked_device));
  if (result.clock.is_object()) {
    for (const auto& w : result.clock.value("warnings", json::array())) clock_problems.push_back(w.get<std::string>());
  }
  result.warnings.insert(result.warnings.end(), clock_problems.begin(), clock_problems.end());
  const auto perf = PerfResultJson(result, args.bench);
  if (!WriteOutputJson("bench", output, perf)) return 1;
  const json& speedup = perf["speedup_vs_torch"];
  std::printf("%s: %d/%d shapes measured, speedup %s -> %s\n", args.op_name.c_str(),
              perf["passed_cases"].get<int>(), perf["total_cases"].get<int>(),
              speedup.is_number() ? (std::to_string(speedup.get<double>()) + "x").c_str() : "none",
              output.c_str());
  if (!clock_problems.empty() && args.lock_frequency_fail_action == "error") {
    std::fprintf(stderr, "opverify bench: clock problems with --lock-frequency-fail-action error:\n");
    for (const auto& p : clock_problems) std::fprintf(stderr, "  %s\n", p.c_str());
    return 1;
  }
  return 0;
}

}  // namespace opverify
