// `opverify bench`: a drop-in replacement for the seed's benchmark.py. Same
// flags, the L1 verify gate, perf_result.json field for field, the same exit
// codes: 0 done (each shape's pass/fail is in the file), 1 the run itself
// failed (or, with --lock-frequency-fail-action error, the clock could not
// be locked or drifted), 2 bad usage or the gate refused (no JSON written).
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace opverify {

struct BenchArgs {
  std::string op_name;
  std::string verify_dir = ".";
  std::string triton_impl_name = "triton_ascend_impl";
  int warmup = 5;
  int repeats = 50;
  std::string output;
  bool verify_not_required = false;
  bool skip_framework = false;
  std::optional<double> framework_latency_ms;
  std::optional<bool> lock_frequency;  // unset: watch the clock, do not lock it
  std::string lock_frequency_fail_action = "warn";
  double freq_check_interval = 1.0;
  // Beyond the seed:
  double timeout_s = 900;
  std::string backend = "auto";
  bool adaptive = false;
  int max_repeats = 0;
  double rse_target = 0.01;
  bool no_flush = false;
  int profile_iterations = 10;
  double drift_tolerance = 0.05;
  unsigned long long seed = 0;
};

CLI::App* AddBenchCommand(CLI::App& parent, BenchArgs* args);
int RunBench(const BenchArgs& args);

}  // namespace opverify
