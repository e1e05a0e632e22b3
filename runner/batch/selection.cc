#include "runner/batch/selection.h"

#include <fnmatch.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <utility>

#include "reduce/report_file.h"
#include "runner/batch/static_cases.h"
#include "runner/store/run_records.h"

namespace opverify {
namespace {

using nlohmann::json;

// One operator's lines of --list: the ids its selected cases have, where the
// manifest or the task file's source makes them certain; a glob line
// ("op/#*", "op/*", "op/edge/*") for the cases known only when it runs,
// with a note on stderr saying why. Returns the number of ids printed.
int ListOperator(const OperatorJob& op, const StaticCaseCount* own,
                 const CaseSelection& selection) {
  std::vector<KnownCase> cases;
  std::string unknown_why;  // set: the task's own cases are counted when it runs
  if (!op.cases.empty()) {
    for (std::size_t i = 0; i < op.cases.size(); ++i)
      cases.push_back(
          {CaseId(op.name, op.cases[i], static_cast<int>(i)), CaseDtype(op.cases[i], nullptr)});
  } else if (!op.code.override_spec.is_null() || (own != nullptr && own->count)) {
    const int count =
        op.code.override_spec.is_null() ? *own->count : 1;  // an override without a sweep: one case
    for (int i = 0; i < count; ++i) cases.push_back({CaseId(op.name, nullptr, i), ""});
  } else {
    unknown_why = own != nullptr && !own->why.empty() ? own->why : "its task file was not read";
  }
  CaseSelection by_name = selection;  // what --dtype aside keeps: the inputs decide the rest
  by_name.dtypes.clear();
  int printed = 0;
  bool dtype_later = false;
  for (const KnownCase& c : cases) {
    if (!CaseLeftOut(by_name, op.name, c.id, c.dtype).empty()) continue;
    if (!selection.dtypes.empty() && c.dtype.empty()) {
      dtype_later = true;
      continue;
    }
    if (!CaseLeftOut(selection, op.name, c.id, c.dtype).empty()) continue;
    std::printf("%s\n", c.id.c_str());
    ++printed;
  }
  const std::string own_glob = op.name + (op.cases.empty() ? "/#*" : "/*");
  if (dtype_later) {
    std::printf("%s\n", own_glob.c_str());
    std::fprintf(
        stderr,
        "opverify-batch: --list: %s: --dtype is decided by its inputs' dtypes when it runs; "
        "listed as %s\n",
        op.name.c_str(), own_glob.c_str());
  }
  // Known only when it runs: with --rerun-failed the ids are the earlier run's.
  const auto later = [&](const std::string& glob, const std::string& why) {
    if (selection.only_ids) {
      for (const std::string& id : *selection.only_ids) {
        if (fnmatch(glob.c_str(), id.c_str(), 0) != 0 ||
            !CaseLeftOut(selection, op.name, id, "").empty())
          continue;
        std::printf("%s\n", id.c_str());
        ++printed;
      }
      return;
    }
    std::printf("%s\n", glob.c_str());
    std::fprintf(stderr, "opverify-batch: --list: %s: %s; listed as %s\n", op.name.c_str(),
                 why.c_str(), glob.c_str());
  };
  if (!unknown_why.empty()) {
    later(op.name + "/#*", "its own cases are counted when it runs (" + unknown_why + ")");
  }
  if (op.config.edge_cases) {
    later(op.name + "/edge/*", "its generated edge cases are made when it runs (edge_cases)");
  }
  return printed;
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
  std::vector<std::string> task_files;  // the operators whose own cases the task file gives
  for (const OperatorJob& op : job.operators) {
    if (op.cases.empty() && op.code.override_spec.is_null())
      task_files.push_back(op.code.task_file);
  }
  Result<std::vector<StaticCaseCount>> counts = CountOwnCases(task_files);
  if (!counts.ok()) {
    std::fprintf(stderr, "opverify-batch: --list: %s\n", counts.status().ToString().c_str());
    counts = std::vector<StaticCaseCount>(task_files.size(),
                                          {std::nullopt, "the source reader did not start"});
  }
  int listed = 0, later = 0;
  std::size_t next = 0;
  for (const OperatorJob& op : job.operators) {
    const bool own = op.cases.empty() && op.code.override_spec.is_null();
    const StaticCaseCount* count = own ? &counts.value()[next++] : nullptr;
    listed += ListOperator(op, count, options.selection);
    later += (own && !count->count) || op.config.edge_cases ? 1 : 0;
  }
  std::fflush(stdout);
  std::fprintf(stderr, "%d cases", listed);
  if (later > 0)
    std::fprintf(stderr, ", and those of %d operators known when they run (lines ending in *)",
                 later);
  std::fprintf(stderr, "\n");
  return 0;
}

}  // namespace opverify
