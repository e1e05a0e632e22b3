#include "runner/cli/usage.h"

#include "runner/common/version.h"

namespace opverify {

void DescribeProgram(CLI::App& app, const std::string& exit_codes) {
  app.set_version_flag("--version", VersionLine(), "Print the version and git commit, then exit");
  app.option_defaults()->always_capture_default();
  SetExitCodes(app, exit_codes);
}

void SetExitCodes(CLI::App& command, const std::string& exit_codes) {
  command.footer("Exit codes:\n" + exit_codes);
}

}  // namespace opverify
