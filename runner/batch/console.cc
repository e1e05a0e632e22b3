#include "runner/batch/console.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runner/cases/cases.h"
#include "runner/cases/selection.h"
#include "runner/common/terminal_text.h"

namespace opverify {
namespace {

// The cases `item` of `op` is expected to run, or -1 when unknown before it is loaded.
int ExpectedItemCases(const OperatorJob& op, const WorkItem& item, const CaseSelection& selection,
                      const std::map<std::string, bool>& done) {
  if (op.cases.empty() || op.config.edge_cases) return -1;
  std::vector<int> indices = item.case_indices;
  if (indices.empty()) {
    for (int i = 0; i < static_cast<int>(op.cases.size()); ++i) indices.push_back(i);
  }
  int count = 0;
  for (const int i : indices) {
    const nlohmann::json& params = op.cases.at(static_cast<std::size_t>(i));
    const std::string id = CaseId(op.name, params, i);
    if (done.count(id) > 0) continue;
    const std::string dtype = CaseDtype(params, nullptr);
    if (!selection.dtypes.empty() && dtype.empty()) return -1;  // its inputs' dtype decides
    if (CaseLeftOut(selection, op.name, id, dtype).empty()) ++count;
  }
  return count;
}

}  // namespace

ProgressPlan PlanProgress(const JobManifest& job, const std::vector<WorkItem>& items,
                          const BatchOptions& options, const std::map<std::string, bool>& done) {
  ProgressPlan plan;
  plan.items = static_cast<int>(items.size());
  for (const OperatorJob& op : job.operators) plan.op_names.push_back(op.name);
  plan.item_cases.assign(items.size(), -1);
  for (const WorkItem& item : items) {
    if (item.id < 0 || item.id >= plan.items) continue;
    plan.item_cases[static_cast<std::size_t>(item.id)] = ExpectedItemCases(
        job.operators.at(static_cast<std::size_t>(item.op_index)), item, options.selection, done);
  }
  return plan;
}

Result<ProgressStreams> OpenProgress(const BatchOptions& options) {
  ProgressStreams streams;
  ProgressOutput& output = streams.output;
  output.verbose = options.verbosity == Verbosity::kVerbose;
  output.plain_interval_s = options.progress_interval_s;
  output.style = ProgressOutput::Style::kNone;
  if (options.progress_text) {
    output.style =
        isatty(STDERR_FILENO) != 0 ? ProgressOutput::Style::kLine : ProgressOutput::Style::kPlain;
  }
  winsize size{};
  if (output.style == ProgressOutput::Style::kLine && ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0)
    output.width = size.ws_col;
  if (options.progress_jsonl == "-") {
    output.jsonl = stderr;
  } else if (!options.progress_jsonl.empty()) {
    streams.jsonl_file.reset(std::fopen(options.progress_jsonl.c_str(), "a"));
    if (!streams.jsonl_file) {
      return Status::IoError("--progress jsonl=" + TerminalSafe(options.progress_jsonl) +
                             ": cannot open it for appending: " + std::strerror(errno));
    }
    std::setvbuf(streams.jsonl_file.get(), nullptr, _IOLBF, 0);  // a reader sees each case at once
    output.jsonl = streams.jsonl_file.get();
  }
  return streams;
}

}  // namespace opverify
