#include "reduce/perf_result_reporter.h"

#include <filesystem>

#include "reduce/report_file.h"

namespace opverify {

Status PerfResultReporter::ReportRun(const RunModel& run) {
  for (const OperatorModel& op : run.operators) {
    if (!op.performance) continue;
    const std::filesystem::path path = std::filesystem::path(context().run_dir) / "ops" /
                                       OperatorFolder(op.name) / "perf_result.json";
    Status written = WriteReportJson(
        path.string(), PerfResultJson(op.performance->result, op.performance->settings));
    if (!written.ok()) return written;
  }
  return Status::Ok();
}

}  // namespace opverify
