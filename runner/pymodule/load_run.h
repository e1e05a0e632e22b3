// opverify.load_run(RUN_DIR): a run folder read back for Python, without
// pandas: the cases, their verdicts and metrics as plain dicts, the
// per-case numbers as numpy arrays, and the performance phase's results.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace opverify {

pybind11::dict LoadRun(const std::string& run_dir);

}  // namespace opverify
