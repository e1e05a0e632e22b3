#include "runner/store/run_plan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "runner/store/durable_file.h"

namespace opverify {

using nlohmann::json;

Status WriteRunPlan(const std::string& run_dir, const RunPlan& plan) {
  json operators = json::array();
  for (const PlannedOperator& op : plan.operators) {
    operators.push_back({{"name", op.name}, {"min_cases", op.min_cases}});
  }
  const std::string text = json{{"format", 1}, {"operators", operators}}.dump(
                               1, ' ', false, json::error_handler_t::replace) +
                           "\n";
  const std::string path = (std::filesystem::path(run_dir) / kRunPlanFile).string();
  const std::string temporary = path + ".tmp";
  if (Status written = WriteNewFile(temporary, text.data(), text.size(), /*exclusive=*/false);
      !written.ok()) {
    return written;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    return Status::IoError(path + ": rename failed: " + std::strerror(errno));
  }
  return SyncDirectory(run_dir);
}

Result<std::optional<RunPlan>> ReadRunPlan(const std::string& run_dir) {
  const std::string path = (std::filesystem::path(run_dir) / kRunPlanFile).string();
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<RunPlan>();
    return Status::IoError(path + ": cannot read the run's plan: " + std::strerror(errno));
  }
  struct stat info {};
  std::string text;
  if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    char block[65536];
    ssize_t got;
    while ((got = read(fd, block, sizeof block)) > 0)
      text.append(block, static_cast<std::size_t>(got));
    if (got < 0) info.st_mode = 0;
  } else {
    info.st_mode = 0;
  }
  close(fd);
  if (!S_ISREG(info.st_mode)) {
    return Status::IoError(path + ": cannot read the run's plan (not a readable regular file)");
  }
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("operators") || !doc["operators"].is_array()) {
    return Status::InvalidInput(path + ": not a run plan {\"format\", \"operators\"}");
  }
  RunPlan plan;
  for (const json& op : doc["operators"]) {
    if (!op.is_object() || !op.contains("name") || !op["name"].is_string() ||
        !op.contains("min_cases") || !op["min_cases"].is_number_integer()) {
      return Status::InvalidInput(path + ": an operator entry is not {\"name\", \"min_cases\"}");
    }
    plan.operators.push_back({op["name"].get<std::string>(), op["min_cases"].get<int>()});
  }
  return std::optional<RunPlan>(std::move(plan));
}

}  // namespace opverify
