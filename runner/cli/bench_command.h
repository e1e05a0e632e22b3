// `opverify bench`: a drop-in replacement for the seed's benchmark.py. Same
// flags, the L1 verify gate, perf_result.json field for field, the same exit
// codes: 0 done (each shape's pass/fail is in the file), 1 the run itself
// failed (or, with --lock-frequency-fail-action error, the clock could not
// be locked or drifted), 2 bad usage or the gate refused (no JSON written).
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "runner/config/bench_config.h"
#include "runner/config/operator_config.h"
#include "runner/process/sandbox.h"

namespace opverify {

struct BenchArgs {
  std::string op_name;
  std::string verify_dir = ".";
  std::string triton_impl_name = "triton_ascend_impl";
  std::string output;
  bool verify_not_required = false;
  std::optional<bool> lock_frequency;  // unset: watch the clock, do not lock it
  std::string lock_frequency_fail_action = "warn";
  double freq_check_interval = 1.0;
  double drift_tolerance = 0.05;
  std::string backend = "auto";
  SandboxSettings sandbox;  // --sandbox, --memory-limit, --executor-log-cap
  BenchConfig bench;        // --warmup, --repeats, --adaptive, ... bind to its fields
  OperatorConfig operator_config;  // --timeout and --seed bind to its fields
};

CLI::App* AddBenchCommand(CLI::App& parent, BenchArgs* args);
int RunBench(const BenchArgs& args);

}  // namespace opverify
