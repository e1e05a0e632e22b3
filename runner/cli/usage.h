// What every opverify program's command line shares: --version (the version
// and commit, runner/common/version.h), defaults shown in --help, and the
// exit codes as --help's last lines.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "runner/process/sandbox.h"

namespace opverify {

// Call right after constructing `app`, before adding options or subcommands
// (they inherit the defaults and the footer from it). `exit_codes` is one
// "N meaning" per line.
void DescribeProgram(CLI::App& app, const std::string& exit_codes);

// The exit-code footer for a subcommand whose codes differ from its program's.
void SetExitCodes(CLI::App& command, const std::string& exit_codes);

// --sandbox, --memory-limit and --executor-log-cap (docs/SECURITY.md) into
// `settings`; a bad value is a usage error (exit 2) naming the option.
void AddSandboxOptions(CLI::App& app, SandboxSettings* settings);

}  // namespace opverify
