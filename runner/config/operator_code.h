// What an operator's executors load: its task and implementation files, or
// a dispatch override's object. A manifest's OperatorJob
// (runner/manifest/manifest.h) and the verifier's OperatorSpec
// (runner/verify/operator_run.h) each hold one, so that the batch passes it
// on in one assignment.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace opverify {

struct OperatorCode {
  std::string task_file;  // <dir>/<name>_torch.py (absolute in a job); empty for an override
  std::string impl_file;  // <dir>/<name>_<impl_name>.py (absolute in a job); empty for an override
  std::string impl_name = "triton_ascend_impl";
  // A dispatch-override operator's "override" object (op, enable, args,
  // kwargs; docs/MANIFEST.md), from which the executor makes both the task
  // and the implementation; null for a task/implementation pair.
  nlohmann::json override_spec;
};

}  // namespace opverify
