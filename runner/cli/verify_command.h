// `opverify verify`: a drop-in replacement for the seed's verify.py. Same
// flags, same verify_result.json, same exit codes (0 only when every case
// passed and there was at least one).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace opverify {

struct VerifyArgs {
  std::string op_name;
  std::string verify_dir = ".";
  std::string triton_impl_name = "triton_ascend_impl";
  double timeout_s = 900;
  std::string output;
  bool non_compute = false;
  bool fresh_cache = false;
  bool keep_cache = false;
  // Beyond the seed:
  std::string backend = "auto";
  std::string standard = "eco";
  std::string precision_mode = "none";
  bool no_lint = false;
  bool probe_determinism = false;
  unsigned long long seed = 0;
  int repeat = 1;
  int seeds = 3;
  std::string golden_precision = "native";
  bool edge_cases = false;
  bool no_runtime_checks = false;
  bool ghost_replay = false;
};

CLI::App* AddVerifyCommand(CLI::App& parent, VerifyArgs* args);
int RunVerify(const VerifyArgs& args);

}  // namespace opverify
