#include "reduce/report_file.h"

#include <filesystem>
#include <fstream>

namespace opverify {

Status WriteReportFile(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    out << content;
    if (!out) return Status::IoError("cannot write " + temporary);
  }
  fs::rename(temporary, target, ec);
  if (ec) return Status::IoError("cannot rename " + temporary + ": " + ec.message());
  return Status::Ok();
}

Status WriteReportJson(const std::string& path, const nlohmann::ordered_json& value) {
  return WriteReportFile(
      path, value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace opverify
