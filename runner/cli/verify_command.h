// `opverify verify`: a drop-in replacement for the seed's verify.py. Same
// flags, same verify_result.json, same exit codes (0 only when every case
// passed and there was at least one).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "runner/config/operator_config.h"
#include "runner/process/sandbox.h"

namespace opverify {

struct VerifyArgs {
  std::string op_name;
  std::string verify_dir = ".";
  std::string triton_impl_name = "triton_ascend_impl";
  std::string output;
  bool fresh_cache = false;
  bool keep_cache = false;
  std::string cache_dir;  // --cache-dir: a persistent compiler cache, kept between runs
  std::string backend = "auto";
  std::vector<std::string> allow_torch;  // --allow-torch OP=WHY
  bool seed_compat = false;  // --seed-compat: as the seed's verify.py (docs/SEED_COMPAT.md)
  int case_number = 0;  // --case N: only case N, numbered from 1 as verify_result.json does; 0: all
  SandboxSettings sandbox;  // --sandbox, --memory-limit, --executor-log-cap
  OperatorConfig config;  // --timeout, --non-compute, --standard, ... bind to its fields
};

CLI::App* AddVerifyCommand(CLI::App& parent, VerifyArgs* args);
int RunVerify(const VerifyArgs& args);

}  // namespace opverify
