#include "runner/cli/lint_command.h"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <iostream>
#include <memory>

#include "runner/cli/library_flags.h"
#include "runner/embed/embedded_python.h"

namespace py = pybind11;

namespace opverify {

CLI::App* AddLintCommand(CLI::App& parent, LintArgs* args) {
  CLI::App* cmd = parent.add_subcommand(
      "lint", "Static check that an implementation computes in its own launched Triton kernels");
  cmd->add_option("file", args->file, "The implementation (<op>_triton_impl.py)")->required();
  cmd->add_flag("--json", args->json, "Print one JSON object (upstream's fields and ours)");
  cmd->add_flag("--non-compute", args->non_compute,
                "Data movement operator: kernels that only load and store are fine");
  AddLibraryFlags(cmd, &args->library, &args->python_path);
  AddAllowTorchFlag(cmd, &args->allow_torch);
  return cmd;
}

namespace {

// Runs the lint in the started interpreter; Python objects die before it stops.
int LintInInterpreter(const LintArgs& args) {
  try {
    py::module_ lint = py::module_::import("opverify_runtime.lint");
    py::object result =
        lint.attr("lint_file")(args.file, args.non_compute, py::arg("library") = args.library,
                               py::arg("python_path") = AbsolutePaths(args.python_path));
    py::module_ allowances = py::module_::import("opverify_runtime.allowances");
    py::object declared = py::module_::import("json").attr("loads")(
        AllowancesToJson(AllowancesFromFlags(args.allow_torch)).dump());
    result = allowances.attr("waive_lint")(result, declared);
    std::string text;
    if (args.json) {
      py::object dumps = py::module_::import("json").attr("dumps");
      text = py::str(dumps(result, py::arg("indent") = 2, py::arg("ensure_ascii") = false))
                 .cast<std::string>();
      text += "\n";
    } else {
      text = py::str(lint.attr("format_text")(result)).cast<std::string>() +
             py::str(allowances.attr("format_waivers")(result)).cast<std::string>();
    }
    std::cout << text << std::flush;
    return lint.attr("exit_code")(result).cast<int>();
  } catch (const py::error_already_set& e) {
    std::cerr << "opverify lint: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace

int RunLint(const LintArgs& args) {
  Result<std::unique_ptr<EmbeddedPython>> python = EmbeddedPython::Start(EmbedOptions{});
  if (!python.ok()) {
    std::cerr << "opverify lint: " << python.status().ToString() << "\n";
    return 2;
  }
  return LintInInterpreter(args);
}

}  // namespace opverify
