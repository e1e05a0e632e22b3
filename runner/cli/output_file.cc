#include "runner/cli/output_file.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <system_error>

namespace opverify {

bool MakeOutputFolder(const char* command, const std::filesystem::path& output) {
  std::error_code ec;
  std::filesystem::create_directories(output.parent_path(), ec);
  if (!ec) return true;
  std::fprintf(stderr, "opverify %s: cannot create %s: %s\n", command, output.parent_path().c_str(),
               ec.message().c_str());
  return false;
}

bool WriteOutputJson(const char* command, const std::filesystem::path& output, const nlohmann::ordered_json& value) {
  std::ofstream out(output);
  out << value.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  if (out) return true;
  std::fprintf(stderr, "opverify %s: cannot write %s\n", command, output.c_str());
  return false;
}

}  // namespace opverify
