#include "runner/batch/warm_cache.h"

#include <unistd.h>

#include <string>
#include <system_error>

namespace opverify {

namespace fs = std::filesystem;

namespace {

bool IsRankFolder(const fs::path& path) { return path.filename().string().rfind("rank-", 0) == 0; }

// Links `from/triton`'s files that `to/triton` lacks into `to/triton`.
void TakeFrom(const fs::path& from, const fs::path& to, WarmedCache* warmed) {
  std::error_code ec;
  const fs::path source = from / "triton";
  if (!fs::is_directory(source, ec)) return;
  for (fs::recursive_directory_iterator it(source, fs::directory_options::skip_permission_denied,
                                           ec),
       end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_symlink(ec) || !it->is_regular_file(ec)) continue;
    const std::string name = it->path().filename().string();
    if (name.find(".tmp.pid_") != std::string::npos) continue;  // Triton still writing it
    const fs::path target = to / "triton" / it->path().lexically_relative(source);
    if (fs::exists(fs::symlink_status(target, ec))) continue;
    std::error_code made;
    fs::create_directories(target.parent_path(), made);
    if (made || link(it->path().c_str(), target.c_str()) != 0) {
      warmed->skipped += 1;
      continue;
    }
    warmed->files += 1;
  }
}

}  // namespace

WarmedCache WarmFromSiblings(const fs::path& own) {
  WarmedCache warmed;
  std::error_code ec;
  if (!IsRankFolder(own)) return warmed;
  for (fs::directory_iterator it(own.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path sibling = it->path();
    if (sibling == own || !IsRankFolder(sibling) || it->is_symlink(ec) || !it->is_directory(ec))
      continue;
    TakeFrom(sibling, own, &warmed);
  }
  return warmed;
}

}  // namespace opverify
