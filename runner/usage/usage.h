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

// app.exit(error) (its message on stderr), then, for each flag or
// subcommand the parse did not know, the known names nearest to it:
// "--maxfial: did you mean '--maxfail'?". Returns app.exit's code.
int ExitWithSuggestions(CLI::App& app, const CLI::ParseError& error);

// The exit-code footer for a subcommand whose codes differ from its program's.
void SetExitCodes(CLI::App& command, const std::string& exit_codes);

// A number in [min, max] and finite: CLI11's own Range and PositiveNumber let
// "nan" through (every comparison with NaN is false) and "inf" when max is.
CLI::Validator FiniteRange(double min, double max);

// A decimal integer in [0, 2^64): digits only. CLI11 reads "" as 0 and lets
// a number past 2^64 through.
CLI::Validator UnsignedInteger();

// Seconds a wait may last: finite, more than 0, at most `max_s` (a week by
// default: a timeout of 1e308 s overflows every clock).
CLI::Validator Seconds(double max_s = 604800);

// --sandbox, --memory-limit and --executor-log-cap (docs/SECURITY.md) into
// `settings`; a bad value is a usage error (exit 2) naming the option.
void AddSandboxOptions(CLI::App& app, SandboxSettings* settings);

}  // namespace opverify
