#include "runner/cli/usage.h"

#include "runner/common/version.h"

namespace opverify {
namespace {

std::uint64_t ParsedSize(const std::string& option, const std::string& text) {
  Result<std::uint64_t> bytes = ParseByteSize(text);
  if (!bytes.ok()) throw CLI::ValidationError(option, bytes.status().message());
  return bytes.value();
}

}  // namespace

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

}  // namespace opverify
