// opverify: the single-operator commands (compare, verify, bench, lint). Each subcommand lives in its own file; main only dispatches.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "runner/cli/bench_command.h"
#include "runner/cli/compare_command.h"
#include "runner/cli/lint_command.h"
#include "runner/cli/verify_command.h"

int main(int argc, char** argv) {
  // Logs go to stderr; stdout carries results (JSON, summaries).
  spdlog::set_default_logger(spdlog::stderr_color_mt("opverify"));
  CLI::App app{"opverify: strict precision verification of operator implementations"};
  app.require_subcommand(1);
  opverify::CompareArgs compare;
  CLI::App* compare_cmd = opverify::AddCompareCommand(app, &compare);
  opverify::VerifyArgs verify;
  CLI::App* verify_cmd = opverify::AddVerifyCommand(app, &verify);
  opverify::BenchArgs bench;
  CLI::App* bench_cmd = opverify::AddBenchCommand(app, &bench);
  opverify::LintArgs lint;
  CLI::App* lint_cmd = opverify::AddLintCommand(app, &lint);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;  // --help is success; every usage error is 2
  }
  if (compare_cmd->parsed()) return opverify::RunCompare(compare);
  if (lint_cmd->parsed()) return opverify::RunLint(lint);
  if (verify_cmd->parsed()) return opverify::RunVerify(verify);
  if (bench_cmd->parsed()) return opverify::RunBench(bench);
  return 2;
}
