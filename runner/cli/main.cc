// opverify: the single-operator commands (compare; verify, bench and lint as
// they land). Each subcommand lives in its own file; main only dispatches.
#include <CLI/CLI.hpp>

#include "runner/cli/compare_command.h"

int main(int argc, char** argv) {
  CLI::App app{"opverify: strict precision verification of operator implementations"};
  app.require_subcommand(1);
  opverify::CompareArgs compare;
  CLI::App* compare_cmd = opverify::AddCompareCommand(app, &compare);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;  // --help is success; every usage error is 2
  }
  if (compare_cmd->parsed()) return opverify::RunCompare(compare);
  return 2;
}
