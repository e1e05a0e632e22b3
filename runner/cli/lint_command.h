// `opverify lint`: the static Triton regression check (upstream's validate_triton_impl.py,
// stricter). The analysis is Python's own `ast`, in the opverify_runtime.lint package, run by
// the embedded interpreter: the checked file is parsed, never imported or executed.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace opverify {

struct LintArgs {
  std::string file;
  bool json = false;
  bool non_compute = false;          // data movement operator: skip the placeholder-kernel check
  std::vector<std::string> library;  // packages whose kernels count as the file's own
  std::vector<std::string> python_path;  // where those packages' sources are found first
  std::vector<std::string> allow_torch;  // --allow-torch OP=WHY: declared exceptions
};

// Registers the subcommand and its flags on `parent`, filling `args`.
CLI::App* AddLintCommand(CLI::App& parent, LintArgs* args);

// Prints the result (JSON with --json, else a short summary) on stdout.
// Exit codes: 0 valid, 1 regression found, 2 unreadable file, syntax error or no interpreter.
int RunLint(const LintArgs& args);

}  // namespace opverify
