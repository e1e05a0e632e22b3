// Where executors compile: the environment that points Triton, inductor and
// whatever else writes under HOME at one cache folder. Shared by
// `opverify verify --fresh-cache/--cache-dir` and each batch rank's cache.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace opverify {

// TRITON_CACHE_DIR folder/triton, TORCHINDUCTOR_CACHE_DIR folder/inductor
// and HOME folder/home, and TRITON_CACHE_AUTOTUNING=1 (autotuning results
// kept in the cache) unless the environment sets it: for RunOptions::env.
std::vector<std::pair<std::string, std::string>> CompilerCacheEnvironment(
    const std::string& folder);

}  // namespace opverify
