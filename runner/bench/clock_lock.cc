#include "runner/bench/clock_lock.h"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "runner/process/subprocess.h"

namespace opverify {

namespace {

struct Ran {
  bool ok = false;
  std::string output;
  std::string what;  // the command and how it ended
};

// Runs a vendor tool with a time limit; its stdout and stderr together.
Ran RunTool(const std::vector<std::string>& argv, double timeout_s = 20) {
  Ran ran;
  std::string joined;
  for (const auto& a : argv) joined += (joined.empty() ? "" : " ") + a;
  char path[] = "/tmp/opverify_clock_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) {
    ran.what = joined + ": cannot make a temporary file";
    return ran;
  }
  close(fd);
  SpawnOptions options;
  options.argv = argv;
  options.stdout_path = path;
  options.stderr_path = "=stdout";
  Result<Subprocess> child = Subprocess::Spawn(options);
  if (!child.ok()) {
    unlink(path);
    ran.what = child.status().ToString();
    return ran;
  }
  std::optional<ExitStatus> status = child->Wait(timeout_s);
  if (!status) status = child->Terminate();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  unlink(path);
  ran.output = text.str();
  ran.ok = status->success();
  ran.what = joined + ": " + status->Describe();
  return ran;
}

std::string Trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  const auto last = s.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? "" : s.substr(first, last - first + 1);
}

std::string NpuIndex(const nlohmann::json& device) {
  if (device.contains("ASCEND_RT_VISIBLE_DEVICES") && device["ASCEND_RT_VISIBLE_DEVICES"].is_string()) {
    const std::string visible = device["ASCEND_RT_VISIBLE_DEVICES"].get<std::string>();
    if (!visible.empty()) return visible.substr(0, visible.find(','));
  }
  return "0";
}

}  // namespace

Result<std::string> LockDeviceClock(const nlohmann::json& device) {
  const std::string backend = device.is_object() ? device.value("backend", "") : "";
  if (backend == "cuda") {
    const std::string id = device.value("uuid", "0");
    Ran query = RunTool({"nvidia-smi", "-i", id, "--query-gpu=clocks.default_applications.graphics",
                         "--format=csv,noheader,nounits"});
    const std::string mhz = Trim(query.output);
    if (!query.ok || mhz.empty() || mhz.find_first_not_of("0123456789") != std::string::npos) {
      return Status::IoError("cannot find the default clock to lock at (" + query.what + "): " + Trim(query.output));
    }
    Ran lock = RunTool({"nvidia-smi", "-i", id, "--lock-gpu-clocks=" + mhz + "," + mhz});
    if (!lock.ok) return Status::IoError("locking the GPU clock failed (" + lock.what + "): " + Trim(lock.output));
    return "locked " + id + " at " + mhz + " MHz";
  }
  if (backend == "npu") {
    const std::string index = NpuIndex(device);
    Ran lock = RunTool({"drv_hlt_dsmi_test", "set_lp_idle", index, "0"});
    if (!lock.ok) return Status::IoError("locking the NPU clock failed (" + lock.what + "): " + Trim(lock.output));
    return "locked NPU " + index + " (set_lp_idle 0)";
  }
  return Status::InvalidInput("no clock to lock on backend '" + backend + "'");
}

std::string UnlockDeviceClock(const nlohmann::json& device) {
  const std::string backend = device.is_object() ? device.value("backend", "") : "";
  if (backend == "cuda") {
    Ran reset = RunTool({"nvidia-smi", "-i", device.value("uuid", "0"), "--reset-gpu-clocks"});
    return reset.what;
  }
  return "nothing to undo on backend '" + backend + "'";
}

}  // namespace opverify
