#include "runner/batch/selection.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <utility>

#include "reduce/report_file.h"
#include "runner/batch/worker.h"
#include "runner/common/utf8.h"
#include "runner/executor/protocol.h"
#include "runner/store/run_records.h"
#include "runner/verify/executor_session.h"

namespace opverify {
namespace {

using nlohmann::json;

// The params of case `index` of `op` ({} for a sweep's, null for the task's own).
json ParamsAt(const OperatorJob& op, int index) {
  const auto at = static_cast<std::size_t>(index);
  return at < op.cases.size() ? op.cases[at] : json(nullptr);
}

// The cases a loaded task has, as the run names them: its own, then the
// generated edge cases. A task that does not load has the one case the run
// would report its failure as (#1), with `*why` set.
std::vector<KnownCase> LoadedCases(const OperatorJob& op, const BatchOptions& options,
                                   RunOptions& run, std::string* why) {
  const OperatorSpec spec = SpecFor(op, options);
  OperatorSession session(spec, run);
  const CallResult loaded = session.Open();
  const auto load = loaded.As<executor_protocol::LoadReply>();
  if (!loaded.succeeded()) {
    session.Spoil();
    *why = CallErrorType(loaded) + ": " + Utf8Prefix(CallErrorMessage(loaded), 300);
  }
  const int own = load.case_count - static_cast<int>(load.edge_cases.size());
  const json described = options.selection.dtypes.empty() || load.case_count == 0
                             ? json::array()
                             : session.DescribeCases();
  std::vector<KnownCase> cases;
  for (int i = 0; i < std::max(load.case_count, 1); ++i) {
    const std::string id =
        i < own || load.case_count == 0
            ? CaseId(op.name, op.cases.empty() ? json(nullptr) : ParamsAt(op, i), i)
            : EdgeCaseId(op.name, load.edge_cases[static_cast<std::size_t>(i - own)].label);
    cases.push_back(
        {id, CaseDtype(ParamsAt(op, i), options.selection.dtypes.empty()
                                            ? json::array()
                                            : OperatorSession::InputDescAt(described, i))});
  }
  return cases;
}

}  // namespace

void AddSelectionFlags(CLI::App& app, BatchOptions* options) {
  CaseSelection& s = options->selection;
  app.add_option("--filter", s.filters,
                 "Only the cases whose operator name or case id matches this glob (repeatable: any "
                 "of them; a case id is op/#N or op/{sweep params}, op/edge/LABEL)");
  app.add_option(
      "--exclude", s.excludes,
      "Leave out the cases whose operator name or case id matches this glob (repeatable)");
  app.add_option("--tag", s.tags,
                 "Only operators with this manifest tag (repeatable: any of them)");
  app.add_option("--dtype", s.dtypes,
                 "Only cases of this dtype: the sweep's `dtype` parameter, else the first tensor "
                 "input's (repeatable)");
  app.add_option(
         "--rerun-failed", options->rerun_failed,
         "An earlier run folder: run exactly the cases that failed there (into a new run folder)")
      ->check(CLI::ExistingDirectory);
  app.add_flag("--list", options->list, "Print the id of every case the selection runs, then exit");
}

Status ResolveRerunFailed(BatchOptions* options) {
  if (options->rerun_failed.empty()) return Status::Ok();
  const std::filesystem::path old = options->rerun_failed;
  if (!std::filesystem::is_directory(old / "shards")) {
    return Status::InvalidInput("--rerun-failed " + old.string() +
                                ": not a run folder (no shards/)");
  }
  std::vector<std::string> problems;
  Result<std::vector<CaseRecord>> records = ReadRunRecords(old.string(), &problems);
  if (!records.ok()) {
    return Status::InvalidInput("--rerun-failed " + old.string() + ": " +
                                records.status().ToString());
  }
  std::set<std::string> failed;
  for (const CaseRecord& r : records.value()) {
    if (r.kind == RecordKind::kCase && !r.passed) failed.insert(r.case_id);
  }
  for (const std::string& problem : problems) {
    std::fprintf(stderr, "opverify-batch: --rerun-failed: unreadable there, not re-run: %s\n",
                 problem.c_str());
  }
  options->selection.only_ids = std::move(failed);
  return Status::Ok();
}

std::optional<std::vector<KnownCase>> KnownCases(const OperatorJob& op) {
  if (op.cases.empty() || op.config.edge_cases) return std::nullopt;
  std::vector<KnownCase> known;
  for (std::size_t i = 0; i < op.cases.size(); ++i) {
    known.push_back(
        {CaseId(op.name, op.cases[i], static_cast<int>(i)), CaseDtype(op.cases[i], nullptr)});
  }
  return known;
}

void SelectJobOperators(JobManifest* job, const CaseSelection& selection, json* left_out) {
  if (selection.everything()) return;
  std::vector<OperatorJob> kept;
  for (OperatorJob& op : job->operators) {
    std::optional<std::vector<KnownCase>> known = KnownCases(op);
    // A sweep without a dtype parameter learns its cases' dtypes only once loaded.
    const bool dtypes_known =
        selection.dtypes.empty() ||
        (known && std::all_of(known->begin(), known->end(),
                              [](const KnownCase& c) { return !c.dtype.empty(); }));
    const std::string why =
        OperatorLeftOut(selection, op.name, op.tags, known && dtypes_known ? &*known : nullptr);
    if (why.empty()) {
      kept.push_back(std::move(op));
      continue;
    }
    json cases = json(nullptr);
    if (known) {
      cases = json::array();
      for (const KnownCase& c : *known) cases.push_back(c.id);
    }
    left_out->push_back(
        {{"name", op.name}, {"selected", false}, {"reason", why}, {"cases", cases}});
  }
  job->operators = std::move(kept);
}

Status WriteSelectionFile(const std::string& run_dir, const JobManifest& job,
                          const CaseSelection& selection, const json& left_out) {
  nlohmann::ordered_json file;
  file["selection"] = selection.ToJson();
  nlohmann::ordered_json operators = nlohmann::ordered_json::array();
  for (const OperatorJob& op : job.operators) {
    nlohmann::ordered_json entry = {{"name", op.name}, {"selected", true}};
    entry["cases"] = nullptr;  // the task's own: counted once loaded (the operator's record)
    if (!op.cases.empty()) {
      entry["cases"] = nlohmann::ordered_json::array();
      for (std::size_t i = 0; i < op.cases.size(); ++i) {
        const std::string id = CaseId(op.name, op.cases[i], static_cast<int>(i));
        const std::string why =
            CaseLeftOut(selection, op.name, id, CaseDtype(op.cases[i], nullptr));
        // A dtype the params do not give is judged by the worker (its record's left_out).
        if (why.empty() || (!selection.dtypes.empty() && CaseDtype(op.cases[i], nullptr).empty())) {
          entry["cases"].push_back(id);
        } else {
          entry["cases"].push_back({{"id", id}, {"left_out", why}});
        }
      }
    }
    operators.push_back(std::move(entry));
  }
  for (const auto& entry : left_out)
    operators.push_back(nlohmann::ordered_json::parse(entry.dump()));
  file["operators"] = std::move(operators);
  return WriteReportJson((std::filesystem::path(run_dir) / "selection.json").string(), file);
}

int ListSelectedCases(const JobManifest& job, const BatchOptions& options) {
  ExecutorPool pool;
  RunOptions run;
  run.backend = options.backend;
  run.log_path = "/dev/null";  // stdout is the list
  run.pool = &pool;
  int listed = 0;
  for (const OperatorJob& op : job.operators) {
    std::optional<std::vector<KnownCase>> cases = KnownCases(op);
    if (cases && !options.selection.dtypes.empty() &&
        std::any_of(cases->begin(), cases->end(),
                    [](const KnownCase& c) { return c.dtype.empty(); })) {
      cases.reset();  // the dtypes are the inputs': ask the task
    }
    std::string why;
    if (!cases) cases = LoadedCases(op, options, run, &why);
    if (!why.empty()) {
      std::fprintf(
          stderr,
          "opverify-batch: --list: %s does not load (%s); the run reports it as one failed case\n",
          op.name.c_str(), why.c_str());
    }
    for (const KnownCase& c : *cases) {
      if (!CaseLeftOut(options.selection, op.name, c.id, c.dtype).empty()) continue;
      std::printf("%s\n", c.id.c_str());
      ++listed;
    }
  }
  std::fflush(stdout);
  std::fprintf(stderr, "%d cases\n", listed);
  return 0;
}

}  // namespace opverify
