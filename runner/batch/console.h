// opverify-batch's console: what rank 0's progress knows of the plan and
// where it writes (the text line, the JSONL stream of --progress). The
// failed cases listed at the end are reduce/run_report.h's PrintFailedCases.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runner/batch/batch_options.h"
#include "runner/common/status.h"
#include "runner/manifest/manifest.h"
#include "runner/scheduler/progress.h"
#include "runner/scheduler/work_plan.h"

namespace opverify {

// The operators' names and each item's expected case count: a sweep's
// share less the cases `options`' selection leaves out and those `done`
// (stored by the run --resume continues); -1 where the count is known only
// once the task is loaded (its own cases, edge cases, --dtype on a sweep
// without a dtype parameter).
ProgressPlan PlanProgress(const JobManifest& job, const std::vector<WorkItem>& items,
                          const BatchOptions& options, const std::map<std::string, bool>& done);

// Where the progress writes, owning --progress jsonl=FILE's file.
struct ProgressStreams {
  ProgressOutput output;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> jsonl_file{nullptr, std::fclose};
};

// The console of `options` (-q, -v, --progress), the text on stderr as a
// live line when stderr is a terminal. IoError naming the file when
// --progress jsonl=FILE cannot be opened for appending. Every rank calls it
// (so that all refuse together); only rank 0 writes to what it returns.
Result<ProgressStreams> OpenProgress(const BatchOptions& options);

}  // namespace opverify
