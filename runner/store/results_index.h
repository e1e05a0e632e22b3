// results.h5 (schemas/hdf5-layout.md): one file linking a run's shards,
// with one table of every record, for h5py and pandas.
#pragma once

#include <string>
#include <vector>

#include "runner/common/status.h"

namespace opverify {

// Writes <run_dir>/results.h5 afresh (to a temporary name, then renamed, so
// a reader never sees half a file): external links /shards/rank-NNNN[.k] to
// every shard's root and one table (1-D compound dataset /cases) of every
// record ReadRunRecords (run_records.h) returns. `problems` as for
// ReadRunRecords; they are also kept in the file's `problems` attribute.
// Call it when the run's writers are done.
Status WriteResultsIndex(const std::string& run_dir, std::vector<std::string>* problems = nullptr);

}  // namespace opverify
