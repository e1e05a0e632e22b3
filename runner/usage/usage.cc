#include "runner/usage/usage.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "runner/common/closest_names.h"
#include "runner/common/strings.h"
#include "runner/common/terminal_text.h"
#include "runner/common/version.h"

namespace opverify {
namespace {

std::uint64_t ParsedSize(const std::string& option, const std::string& text) {
  Result<std::uint64_t> bytes = ParseByteSize(text);
  if (!bytes.ok()) throw CLI::ValidationError(option, bytes.status().message());
  return bytes.value();
}

}  // namespace

namespace {

// The names a mistyped token may have meant: every option of `app` and of
// its subcommands, and the subcommands themselves.
void KnownNames(const CLI::App& app, std::vector<std::string>* flags,
                std::vector<std::string>* commands) {
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) flags->push_back("--" + name);
    for (const std::string& name : option->get_snames()) flags->push_back("-" + name);
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands->push_back(sub->get_name());
    KnownNames(*sub, flags, commands);
  }
}

// The tokens the parse left over, in `app` and its subcommands.
void LeftOver(const CLI::App& app, std::vector<std::string>* tokens) {
  for (const std::string& token : app.remaining()) tokens->push_back(token);
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    LeftOver(*sub, tokens);
}

}  // namespace

int ExitWithSuggestions(CLI::App& app, const CLI::ParseError& error) {
  const int code = app.exit(error);
  if (code == 0) return 0;  // --help, --version
  std::vector<std::string> flags, commands, tokens;
  KnownNames(app, &flags, &commands);
  LeftOver(app, &tokens);
  for (const std::string& token : tokens) {
    const std::string word = token.substr(0, token.find('='));  // --maxfial=3
    const bool flag = !word.empty() && word[0] == '-';
    const std::string hint = DidYouMean(ClosestNames(word, flag ? flags : commands));
    if (!hint.empty()) std::fprintf(stderr, "%s: %s\n", TerminalSafe(word).c_str(), hint.c_str());
  }
  return code;
}
void DescribeProgram(CLI::App& app, const std::string& exit_codes) {
  app.set_version_flag("--version", VersionLine(), "Print the version and git commit, then exit");
  app.option_defaults()->always_capture_default();
  SetExitCodes(app, exit_codes);
}

void AddSandboxOptions(CLI::App& app, SandboxSettings* settings) {
  app.add_option_function<std::string>(
         "--sandbox",
         [settings](const std::string& name) { settings->mode = *ParseSandboxMode(name); },
         "How executors are confined: bwrap, unshare (namespaces), none, or auto (the first that "
         "works)")
      ->check(CLI::IsMember({"auto", "bwrap", "unshare", "none"}))
      ->default_str("auto");
  app.add_option_function<std::string>(
         "--memory-limit",
         [settings](const std::string& text) {
           settings->memory_bytes = ParsedSize("--memory-limit", text);
         },
         "Each executor's host memory (RLIMIT_DATA), e.g. 16G; none: no limit")
      ->default_str("80% of the machine's memory / ranks per node");
  app.add_option_function<std::string>(
         "--executor-log-cap",
         [settings](const std::string& text) {
           settings->log_cap_bytes = ParsedSize("--executor-log-cap", text);
         },
         "Largest executor log (stdout and stderr); the rest is dropped")
      ->default_str("64M");
}

void SetExitCodes(CLI::App& command, const std::string& exit_codes) {
  command.footer("Exit codes:\n" + exit_codes);
}

namespace {

// `text` as a finite double within [min, max] (exclusive of min when
// `open_min`), or why not.
std::string CheckNumber(const std::string& text, double min, double max, bool open_min) {
  double value = 0;
  if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
  if (!std::isfinite(value)) return "'" + text + "' is not a finite number";
  if (value < min || (open_min && value == min) || value > max) {
    return Printf("%s is outside %s%g, %g]", text.c_str(), open_min ? "(" : "[", min, max);
  }
  return "";
}

}  // namespace

CLI::Validator FiniteRange(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) { return CheckNumber(text, min, max, false); },
      Printf("FINITE in [%g - %g]", min, max));
}

CLI::Validator UnsignedInteger() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const bool digits =
            !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        // 2^64 - 1 is 18446744073709551615: 20 digits, compared as text at that length.
        if (!digits || text.size() > 20 || (text.size() == 20 && text > "18446744073709551615")) {
          return "'" + text + "' is not an integer in [0, 2^64)";
        }
        return "";
      },
      "UINT64");
}

CLI::Validator Seconds(double max_s) {
  return CLI::Validator([max_s](std::string& text) { return CheckNumber(text, 0, max_s, true); },
                        Printf("SECONDS in (0, %g]", max_s));
}

}  // namespace opverify
