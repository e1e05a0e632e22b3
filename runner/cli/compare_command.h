// `opverify compare`: judge one golden/actual pair of tensor files.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace opverify {

struct CompareArgs {
  std::string golden;
  std::string actual;
  std::string dtype;
  std::string input_type = "unknown";
  bool non_compute = false;
  std::string standard = "eco";
  std::string precision_mode = "none";
  bool json = false;
  int worst = 8;
  int threads = 0;
};

// Registers the subcommand and its flags on `parent`, filling `args`.
CLI::App* AddCompareCommand(CLI::App& parent, CompareArgs* args);

// Exit codes: 0 passed, 1 failed, 2 bad usage or unreadable input.
int RunCompare(const CompareArgs& args);

}  // namespace opverify
