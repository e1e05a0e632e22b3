// What an earlier run stored, read back for a new one: its timings order the
// work (--previous, or the run being resumed), its cases are skipped when it
// is finished (--resume).
#pragma once

#include <map>
#include <string>

#include "runner/batch/worker.h"

namespace opverify {

// Each operator's time in seconds in the run at `run_dir`: from its
// summary.json timeline (every item's time on its rank, start-up and
// benchmark included), else from its stored cases' wall times; empty when
// run_dir is empty or unreadable (with a warning naming `flag`, the option
// that named it).
std::map<std::string, double> PreviousSeconds(const std::string& run_dir, const char* flag);

// Fills setup->done, setup->benched and setup->facts with the cases,
// benchmarked shapes and operator-level records the run at `run_dir`
// stored and can read back; a journaled case whose data a machine crash lost
// is left to run again. Returns false (logged) when the run cannot be read.
bool LoadResumeState(const std::string& run_dir, WorkerSetup* setup);

}  // namespace opverify
