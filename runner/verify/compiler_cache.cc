#include "runner/verify/compiler_cache.h"

#include <filesystem>

namespace opverify {

std::vector<std::pair<std::string, std::string>> CompilerCacheEnvironment(
    const std::string& folder) {
  const std::filesystem::path cache(folder);
  return {{"TRITON_CACHE_DIR", (cache / "triton").string()},
          {"TORCHINDUCTOR_CACHE_DIR", (cache / "inductor").string()},
          {"HOME", (cache / "home").string()}};
}

}  // namespace opverify
