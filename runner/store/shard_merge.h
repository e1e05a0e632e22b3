// Merging the shards of run folders that ran one job apart.
#pragma once

#include <string>
#include <vector>

#include "runner/common/status.h"

namespace opverify {

// Makes <run_dir>/shards the union of the shards of `parts`: run folders of
// one job run apart, such as the `--shard I/N` parts of a Slurm job array.
// Each part's rank-NNNN[.k].h5 becomes rank-NNNN.<next free k>.h5 here, as
// if it were a later session of that rank, and its journal lines follow it
// under the new name. Files are hard-linked where the file system allows
// (a shard is never written again once its writer closed it), else copied;
// a part's shard keeps its root attributes (`shard` is its k there). A
// case stored in several parts keeps its most recent record when read
// (run_records.h), as after a resume. shards/merged_from.json lists where
// each file came from; merging again replaces what an earlier merge made,
// while a run_dir whose shards/ a batch wrote is refused. A journal line
// naming a shard its part lacks: with `problems` null, an error; otherwise
// a line in *problems and left out. Call it when the parts' writers are done.
Status MergeShards(const std::string& run_dir, const std::vector<std::string>& parts,
                   std::vector<std::string>* problems = nullptr);

}  // namespace opverify
