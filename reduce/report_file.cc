#include "reduce/report_file.h"

#include <cstdio>
#include <filesystem>

#include "runner/store/durable_file.h"

namespace opverify {

Status WriteReportFile(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec)
      return Status::IoError("cannot write " + path + ": " + target.parent_path().string() + ": " +
                             ec.message());
  }
  const std::string temporary = path + ".tmp";
  // Space allocated first, so a full disk fails before anything is written,
  // and the temporary removed on any failure: no torn .tmp is left behind.
  if (Status written = WriteNewFile(temporary, content.data(), content.size(), /*exclusive=*/false);
      !written.ok()) {
    return Status::IoError("cannot write " + path + ": " + written.message());
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    std::remove(temporary.c_str());
    return Status::IoError("cannot write " + path + ": rename of " + temporary + ": " +
                           ec.message());
  }
  return Status::Ok();
}

Status WriteReportJson(const std::string& path, const nlohmann::ordered_json& value) {
  return WriteReportFile(
      path, value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace opverify
