// opverify-batch's case selection at the edges: its flags (--filter,
// --exclude, --tag, --dtype, --rerun-failed, --list), the manifest's
// operators cut to it, selection.json (what the run left out and why, which
// the reducer reports as skipped), and --list's printout. The predicate
// itself is runner/cases/selection.h.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "runner/batch/batch_options.h"
#include "runner/common/status.h"
#include "runner/manifest/manifest.h"

namespace opverify {

// Adds the selection flags to `app`, filling options->selection,
// options->rerun_failed and options->list.
void AddSelectionFlags(CLI::App& app, BatchOptions* options);

// --rerun-failed: options->selection.only_ids set to the failed cases stored
// in the earlier run folder. An error names the folder when it holds no run.
Status ResolveRerunFailed(BatchOptions* options);

// The operators of `job` (already cut to its --part) that the selection
// keeps, in manifest order; what it leaves out goes to *left_out as
// selection.json's entries ({name, selected: false, reason, cases}).
void SelectJobOperators(JobManifest* job, const CaseSelection& selection, nlohmann::json* left_out);

// A sweep's cases as the selection sees them (id and dtype, from params); null
// for an operator whose cases are known only once its task is loaded.
std::optional<std::vector<KnownCase>> KnownCases(const OperatorJob& op);

// Writes <run_dir>/selection.json: the selection, and every operator of the
// run's part of the manifest, selected or not, with its sweep's case ids.
Status WriteSelectionFile(const std::string& run_dir, const JobManifest& job,
                          const CaseSelection& selection, const nlohmann::json& left_out);

// --list: prints the id of every case the run would run, one a line, in the
// order of the manifest, without running any user code: a sweep's and an
// override's from the manifest, a task's own from its source where it makes
// the count certain (static_cases.h); what is known only when the operator
// runs (its own cases otherwise, generated edge cases, --dtype decided by its
// inputs) as one glob line ("op/#*", "op/edge/*", "op/*") that matches those
// ids, with a note on stderr. Returns the exit code: 0.
int ListSelectedCases(const JobManifest& job, const BatchOptions& options);

}  // namespace opverify
