// opverify: the single-operator commands (compare, verify, bench, lint). Each subcommand lives in its own file; main only dispatches.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "runner/cli/bench_command.h"
#include "runner/cli/compare_command.h"
#include "runner/cli/lint_command.h"
#include "runner/cli/verify_command.h"
#include "runner/common/terminal_log.h"
#include "runner/usage/usage.h"

int main(int argc, char** argv) {
  // Logs go to stderr, escape sequences stripped; stdout carries results (JSON, summaries).
  spdlog::set_default_logger(opverify::ConsoleLogger("opverify"));
  CLI::App app{"opverify: strict precision verification of operator implementations"};
  opverify::DescribeProgram(app, "  0  passed\n  1  failed\n  2  bad usage or input\n  (each subcommand's --help has its own)");
  app.require_subcommand(1);
  opverify::CompareArgs compare;
  CLI::App* compare_cmd = opverify::AddCompareCommand(app, &compare);
  opverify::VerifyArgs verify;
  CLI::App* verify_cmd = opverify::AddVerifyCommand(app, &verify);
  opverify::BenchArgs bench;
  CLI::App* bench_cmd = opverify::AddBenchCommand(app, &bench);
  opverify::LintArgs lint;
  CLI::App* lint_cmd = opverify::AddLintCommand(app, &lint);
  opverify::SetExitCodes(*compare_cmd, "  0  passed\n  1  failed\n  2  bad usage or unreadable input");
  opverify::SetExitCodes(*verify_cmd,
                         "  0  every case passed\n  1  a case failed, or the operator's files are missing\n"
                         "  2  bad usage, or the output could not be written");
  opverify::SetExitCodes(*bench_cmd,
                         "  0  done\n  1  the run failed (or a clock problem with --lock-frequency-fail-action error)\n"
                         "  2  bad usage, or the L1 verify gate refused");
  opverify::SetExitCodes(*lint_cmd, "  0  valid\n  1  a violation found\n  2  the file could not be read or parsed");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = opverify::ExitWithSuggestions(app, e);
    return code == 0 ? 0 : 2;  // --help is success; every usage error is 2
  }
  if (compare_cmd->parsed()) return opverify::RunCompare(compare);
  if (lint_cmd->parsed()) return opverify::RunLint(lint);
  if (verify_cmd->parsed()) return opverify::RunVerify(verify);
  if (bench_cmd->parsed()) return opverify::RunBench(bench);
  return 2;
}
