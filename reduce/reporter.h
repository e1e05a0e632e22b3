// A report format. WriteRunReports builds the run model once and hands it to
// one reporter per format (summary.json, report.md, report.html, junit.xml,
// each operator's verify_result.json, perf_result.json and
// precision_report.md); a new format is a new subclass, not an edit of the
// others. Reporters only format: every number they print is in the model.
#pragma once

#include <string>

#include "reduce/run_model.h"
#include "runner/common/status.h"

namespace opverify {

struct ReportExtras;  // reduce/report_extras.h

class Reporter {
 public:
  // What a reporter is told before the run: where its files go.
  struct Context {
    std::string run_dir;
    // The baseline diff, references check and history (report.md and
    // report.html show them); null or empty when opverify-reduce was given none.
    const ReportExtras* extras = nullptr;
  };

  virtual ~Reporter() = default;

  // Called once, first. The default keeps `context` for context().
  virtual void ReportContext(const Context& context) { context_ = context; }

  // Called once, after ReportContext: writes this format's files for `run`.
  // An error names the file it could not write; the other reporters still run.
  virtual Status ReportRun(const RunModel& run) = 0;

  // Called once, last; for a reporter that holds something back until the
  // end. The default has nothing to do.
  virtual Status Finalize() { return Status::Ok(); }

 protected:
  const Context& context() const { return context_; }

 private:
  Context context_;
};

}  // namespace opverify
