#include "runner/batch/static_cases.h"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <memory>

#include "runner/embed/embedded_python.h"

namespace py = pybind11;

namespace opverify {

Result<std::vector<StaticCaseCount>> CountOwnCases(const std::vector<std::string>& task_files) {
  if (task_files.empty()) return std::vector<StaticCaseCount>{};
  Result<std::unique_ptr<EmbeddedPython>> python = EmbeddedPython::Start(EmbedOptions{});
  if (!python.ok()) return python.status();
  std::vector<StaticCaseCount> counts;
  try {  // Python objects die before the interpreter stops
    const py::list answers = py::module_::import("opverify_runtime.static_cases")
                                 .attr("count_files")(task_files)
                                 .cast<py::list>();
    for (const py::handle answer : answers) {
      const py::list pair = answer.cast<py::list>();
      StaticCaseCount count;
      if (!pair[0].is_none()) count.count = pair[0].cast<int>();
      if (!pair[1].is_none()) count.why = pair[1].cast<std::string>();
      counts.push_back(std::move(count));
    }
  } catch (const py::error_already_set& e) {
    return Status::Internal(std::string("counting the tasks' own cases: ") + e.what());
  }
  return counts;
}

}  // namespace opverify
