// Which cases a run covers: opverify-batch's --filter, --exclude, --tag,
// --dtype and --rerun-failed, as one pure predicate shared by the batch (what
// it runs, what --list prints) and the reducer (what junit.xml reports as
// skipped), so that every one of them agrees on every case.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace opverify {

struct CaseSelection {
  // Globs (fnmatch, no flags: `*` also matches `/`) on operator names and
  // case ids: a case is in when any matches its operator's name or its id
  // (empty: every case). A glob with a `/` ("softmax/#1") keeps the operator
  // whose name matches the part before the first `/`.
  std::vector<std::string> filters;
  std::vector<std::string> excludes;  // globs likewise: a case any of them matches is out
  std::vector<std::string> tags;      // the operator has one of them (empty: any)
  std::vector<std::string> dtypes;    // the case's dtype is one of them (empty: any)
  // --rerun-failed: exactly these case ids (the failed cases of an earlier run).
  std::optional<std::set<std::string>> only_ids;

  bool everything() const {
    return filters.empty() && excludes.empty() && tags.empty() && dtypes.empty() && !only_ids;
  }
  // What it says, for the run's record: {filter, exclude, tag, dtype, rerun_failed (count)}.
  nlohmann::json ToJson() const;
};

// A case known before its task is loaded (a sweep's): its id and dtype.
struct KnownCase {
  std::string id;
  std::string dtype;
};

// Why the whole operator is out ("" when some of its cases may be in).
// `known`: its cases when a sweep makes them (then it is out when each of
// them is), else null (the task's own cases, counted once it is loaded).
std::string OperatorLeftOut(const CaseSelection& selection, const std::string& op_name,
                            const std::vector<std::string>& op_tags,
                            const std::vector<KnownCase>* known);

// Why the case is out ("" when it runs). `dtype`: the case's dtype (CaseDtype
// below); "" when it is not known, which no --dtype matches.
std::string CaseLeftOut(const CaseSelection& selection, const std::string& op_name,
                        const std::string& case_id, const std::string& dtype);

// A case's dtype for --dtype: its sweep parameter "dtype" when it has one,
// else its first tensor input's ("float16"; `input_desc` as the executor
// describes a case's inputs), else "". A leading "torch." is dropped.
std::string CaseDtype(const nlohmann::json& params, const nlohmann::json& input_desc);

}  // namespace opverify
