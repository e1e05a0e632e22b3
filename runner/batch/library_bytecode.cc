#include "runner/batch/library_bytecode.h"

#include <chrono>
#include <filesystem>
#include <set>

#include <unistd.h>

#include "runner/embed/embedded_python.h"
#include "runner/process/subprocess.h"
#include "runner/verify/operator_run.h"

namespace opverify {

namespace fs = std::filesystem;

std::vector<std::string> LibrarySources(const JobManifest& job) {
  std::vector<std::string> sources;
  std::set<std::string> seen;
  for (const OperatorJob& op : job.operators) {
    for (const std::string& folder : op.config.python_path) {
      for (const std::string& package : op.config.library) {
        std::error_code ec;
        fs::path found = fs::path(folder) / package;
        if (!fs::is_directory(found, ec)) {
          found += ".py";  // a single-module library
          if (!fs::is_regular_file(found, ec)) continue;
        }
        if (seen.insert(found.string()).second) sources.push_back(found.string());
      }
    }
  }
  return sources;
}

std::vector<std::string> RuntimeSources() {
  const fs::path runtime = fs::path(RuntimeDir()) / "opverify_runtime";
  std::error_code ec;
  if (EnvironmentFlag("OPVERIFY_NO_BYTECODE") || !fs::is_directory(runtime, ec) ||
      access(runtime.c_str(), W_OK) != 0) {
    return {};
  }
  return {runtime.string()};
}

CompiledSources CompileLibrarySources(const std::vector<std::string>& sources,
                                      const std::string& executor_program,
                                      const std::string& log_path, double timeout_s) {
  CompiledSources done;
  if (sources.empty() || EnvironmentFlag("OPVERIFY_NO_BYTECODE")) return done;
  done.ran = true;
  const auto started = std::chrono::steady_clock::now();
  SpawnOptions spawn;
  spawn.argv = {executor_program, "--compile-sources"};
  spawn.argv.insert(spawn.argv.end(), sources.begin(), sources.end());
  spawn.stdout_path = log_path;
  spawn.stderr_path = "=stdout";
  Result<Subprocess> child = Subprocess::Spawn(spawn);
  if (!child.ok()) {
    done.detail = child.status().ToString();
    return done;
  }
  std::optional<ExitStatus> status = child->Wait(timeout_s);
  if (!status) status = child->Terminate();
  done.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  done.ok = status->success();
  if (!done.ok) done.detail = "--compile-sources: " + status->Describe() + " (" + log_path + ")";
  return done;
}

}  // namespace opverify
