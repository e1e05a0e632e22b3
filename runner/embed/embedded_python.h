// The Python interpreter embedded in our programs (the executor, and the
// `opverify lint` command, which parses Python with Python's own `ast`).
//
// The interpreter is the one opverify was built for (Python3_EXECUTABLE), or
// the one named by OPVERIFY_PYTHON. Its executable is set in PyConfig, so a
// virtual environment's pyvenv.cfg is found and its packages (torch, triton)
// are importable, as in the H200 image's venv.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runner/common/status.h"

namespace opverify {

struct EmbedOptions {
  std::string python_executable;        // empty: OPVERIFY_PYTHON, else the build's
  std::vector<std::string> extra_paths;  // prepended to sys.path
  std::vector<std::string> argv{"opverify"};
  // No site (no .pth file runs), no user site, no PYTHON* variables: the
  // standard library alone (opverify-executor --compile-sources).
  bool isolated = false;
};

// Holds the interpreter for the lifetime of the object (one per process).
// Python's own signal handlers are not installed: SIGINT/SIGTERM keep their
// default meaning, so a parent can always stop the process.
class EmbeddedPython {
 public:
  static Result<std::unique_ptr<EmbeddedPython>> Start(const EmbedOptions& options);
  ~EmbeddedPython();
  EmbeddedPython(const EmbeddedPython&) = delete;
  EmbeddedPython& operator=(const EmbeddedPython&) = delete;

 private:
  EmbeddedPython() = default;
};

// The folder holding our Python package `opverify_runtime`: OPVERIFY_RUNTIME_DIR,
// else <prefix>/share/opverify/python next to an installed program, else the
// source tree this build came from.
std::string RuntimeDir();

// The interpreter EmbeddedPython uses by default.
std::string DefaultPythonExecutable();

}  // namespace opverify
