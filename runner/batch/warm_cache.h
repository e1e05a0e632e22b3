// A rank's persistent compiler cache warmed from its siblings' (--cache-dir).
//
// Each rank compiles into a Triton cache folder of its own (DIR/rank-NNNN:
// concurrent writers to one Triton cache see files vanish under them,
// NOTES.md), so on a later night a rank finds only what it compiled itself,
// and the plan rarely gives it the same operators again. Before its first
// executor starts, a rank takes every cache file its siblings have that it
// lacks, as a hard link (no copy, no second writer: Triton replaces a file by
// renaming a new one over it, which never touches the sibling's), so each rank
// starts the night with the union of the last night's caches, autotuning
// results included.
#pragma once

#include <filesystem>

namespace opverify {

struct WarmedCache {
  long files = 0;    // linked from siblings
  long skipped = 0;  // could not be linked (another filesystem, a race): compiled as before
};

// For each sibling folder of `own` (the other rank-NNNN folders beside it),
// every regular file under its `triton/` that `own/triton/` lacks, linked in
// at the same relative path. Triton's temporary files (".tmp.pid_") are left
// out: a file Triton shows under its final name is complete.
WarmedCache WarmFromSiblings(const std::filesystem::path& own);

}  // namespace opverify
