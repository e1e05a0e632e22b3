#include "runner/embed/embedded_python.h"

#include <pybind11/embed.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace py = pybind11;
namespace fs = std::filesystem;

namespace opverify {
namespace {

std::string SelfExecutable() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.string();
}

Status FromPyStatus(const PyStatus& status, const std::string& what) {
  if (!PyStatus_Exception(status)) return Status::Ok();
  return Status::Internal("embedded Python: " + what + ": " +
                          (status.err_msg != nullptr ? status.err_msg : "failed"));
}

}  // namespace

std::string DefaultPythonExecutable() {
  if (const char* env = std::getenv("OPVERIFY_PYTHON"); env != nullptr && *env != '\0') return env;
  return OPVERIFY_BUILD_PYTHON;
}

std::string RuntimeDir() {
  if (const char* env = std::getenv("OPVERIFY_RUNTIME_DIR"); env != nullptr && *env != '\0') return env;
  const std::string self = SelfExecutable();
  if (!self.empty()) {
    const fs::path installed = fs::path(self).parent_path().parent_path() / "share" / "opverify" / "python";
    if (fs::exists(installed / "opverify_runtime")) return installed.string();
  }
  return OPVERIFY_SOURCE_RUNTIME_DIR;
}

Result<std::unique_ptr<EmbeddedPython>> EmbeddedPython::Start(const EmbedOptions& options) {
  const std::string executable =
      options.python_executable.empty() ? DefaultPythonExecutable() : options.python_executable;
  if (access(executable.c_str(), X_OK) != 0) {
    return Status::NotFound("Python interpreter '" + executable +
                            "' is not executable (set OPVERIFY_PYTHON to the interpreter that has torch)");
  }
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0;
  config.parse_argv = 0;
  if (options.isolated) {
    config.isolated = 1;
    config.site_import = 0;
    config.use_environment = 0;
    config.user_site_directory = 0;
  }
  Status status = FromPyStatus(PyConfig_SetBytesString(&config, &config.executable, executable.c_str()),
                               "executable " + executable);
  if (status.ok()) {
    status = FromPyStatus(PyConfig_SetBytesString(&config, &config.program_name, executable.c_str()),
                          "program name");
  }
  if (!status.ok()) {
    PyConfig_Clear(&config);
    return status;
  }
  std::vector<const char*> argv;
  for (const auto& arg : options.argv) argv.push_back(arg.c_str());
  try {
    // Takes ownership of config (cleared inside, on success and on failure).
    py::initialize_interpreter(&config, static_cast<int>(argv.size()), argv.data(), false);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("embedded Python failed to start: ") + e.what());
  }
  std::unique_ptr<EmbeddedPython> interpreter(new EmbeddedPython());
  try {
    py::list path = py::module_::import("sys").attr("path");
    std::vector<std::string> prepend = options.extra_paths;
    prepend.push_back(RuntimeDir());
    for (auto it = prepend.rbegin(); it != prepend.rend(); ++it) path.insert(0, *it);
  } catch (const py::error_already_set& e) {
    return Status::Internal(std::string("embedded Python: setting sys.path: ") + e.what());
  }
  return interpreter;
}

EmbeddedPython::~EmbeddedPython() { py::finalize_interpreter(); }

}  // namespace opverify
