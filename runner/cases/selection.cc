#include "runner/cases/selection.h"

#include <fnmatch.h>

#include <algorithm>

namespace opverify {
namespace {

using nlohmann::json;

bool Matches(const std::string& glob, const std::string& text) {
  return fnmatch(glob.c_str(), text.c_str(), 0) == 0;
}

// The first of `globs` that matches the operator's name or the case's id.
const std::string* FirstMatch(const std::vector<std::string>& globs, const std::string& op_name,
                              const std::string& case_id) {
  for (const std::string& glob : globs) {
    if (Matches(glob, op_name) || Matches(glob, case_id)) return &glob;
  }
  return nullptr;
}

std::string Quoted(const std::string& text) { return "'" + text + "'"; }

std::string WithoutTorch(std::string dtype) {
  return dtype.rfind("torch.", 0) == 0 ? dtype.substr(6) : dtype;
}

}  // namespace

json CaseSelection::ToJson() const {
  json out = {{"filter", filters}, {"exclude", excludes}, {"tag", tags}, {"dtype", dtypes}};
  out["rerun_failed"] = only_ids ? json(only_ids->size()) : json(nullptr);
  return out;
}

std::string OperatorLeftOut(const CaseSelection& selection, const std::string& op_name,
                            const std::vector<std::string>& op_tags,
                            const std::vector<KnownCase>* known) {
  if (!selection.tags.empty() &&
      std::none_of(op_tags.begin(), op_tags.end(), [&](const std::string& tag) {
        return std::find(selection.tags.begin(), selection.tags.end(), tag) != selection.tags.end();
      })) {
    return "no tag of --tag";
  }
  for (const std::string& glob : selection.excludes) {
    if (Matches(glob, op_name)) return "--exclude " + Quoted(glob);
  }
  if (known != nullptr) {
    std::string first_reason;
    for (const KnownCase& c : *known) {
      const std::string reason = CaseLeftOut(selection, op_name, c.id, c.dtype);
      if (reason.empty()) return "";
      if (first_reason.empty()) first_reason = reason;
    }
    return first_reason;
  }
  if (selection.only_ids) {
    const std::string prefix = op_name + "/";
    const auto first = selection.only_ids->lower_bound(prefix);
    if (first == selection.only_ids->end() || first->rfind(prefix, 0) != 0) {
      return "--rerun-failed: no failed case";
    }
  }
  if (!selection.filters.empty() && std::none_of(selection.filters.begin(), selection.filters.end(),
                                                 [&](const std::string& glob) {
                                                   const std::size_t slash = glob.find('/');
                                                   return Matches(glob, op_name) ||
                                                          (slash != std::string::npos &&
                                                           Matches(glob.substr(0, slash), op_name));
                                                 })) {
    return "no match of --filter";
  }
  return "";
}

std::string CaseLeftOut(const CaseSelection& selection, const std::string& op_name,
                        const std::string& case_id, const std::string& dtype) {
  if (selection.only_ids && selection.only_ids->count(case_id) == 0) {
    return "--rerun-failed: it passed, or did not run, there";
  }
  if (!selection.filters.empty() && FirstMatch(selection.filters, op_name, case_id) == nullptr) {
    return "no match of --filter";
  }
  if (const std::string* glob = FirstMatch(selection.excludes, op_name, case_id)) {
    return "--exclude " + Quoted(*glob);
  }
  if (!selection.dtypes.empty() && std::find(selection.dtypes.begin(), selection.dtypes.end(),
                                             dtype) == selection.dtypes.end()) {
    return "dtype " + (dtype.empty() ? std::string("unknown") : dtype) + " not in --dtype";
  }
  return "";
}

std::string CaseDtype(const json& params, const json& input_desc) {
  if (params.is_object() && params.contains("dtype") && params["dtype"].is_string()) {
    return WithoutTorch(params["dtype"].get<std::string>());
  }
  if (!input_desc.is_array()) return "";
  for (const json& input : input_desc) {
    if (!input.is_object()) continue;
    std::string dtype = input.value("dtype", "");
    if (input.contains("items") && input["items"].is_array() && !input["items"].empty() &&
        input["items"][0].is_object()) {  // a list of tensors: its first one's
      dtype = input["items"][0].value("dtype", "");
    }
    if (!dtype.empty()) return WithoutTorch(dtype);
  }
  return "";
}

}  // namespace opverify
