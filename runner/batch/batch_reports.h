// Rank 0's last step, once every rank has closed its shard: the results
// index, run.json's facts and the reports, the one-line total.
#pragma once

#include <csignal>
#include <string>

#include "runner/batch/batch_flags.h"
#include "runner/batch/launch.h"
#include "runner/batch/rank_role.h"

namespace opverify {

// What --time-limit puts in the stop flag the signal handlers set (SIGALRM
// itself has no handler, so the number means the time limit alone).
inline constexpr int kTimeLimitStop = SIGALRM;

// Writes results.h5 and the reports of the run in flags.options.run_dir and
// returns the program's exit code: 2 when the reports could not be written
// or a worker failed or left the run, 1 when a stop signal cut the run short or a case
// failed (or none ran, or results the run's plan promised are unreadable
// or missing), 0 when every case passed. `stop_signal`: what stopped the
// work (a signal's number, kTimeLimitStop, 0: nothing), as it stood when the
// rank's work ended; a signal or the time limit during the reports changes
// nothing.
int WriteBatchReports(const BatchFlags& flags, const std::string& job_name,
                      const LaunchInfo& launch, int ranks, const RankOutcome& outcome,
                      int stop_signal);

}  // namespace opverify
