#include "runner/results/waivers.h"

#include <algorithm>
#include <map>

namespace opverify {

using nlohmann::json;

std::string WaiverField(const json& waiver, const char* key) {
  return waiver.is_object() && waiver.contains(key) && waiver[key].is_string()
             ? waiver[key].get<std::string>()
             : std::string();
}

void MergeWaivers(json* into, const json& more) {
  if (!more.is_array()) return;
  if (!into->is_array()) *into = json::array();
  for (const json& waiver : more) {
    if (!waiver.is_object()) continue;
    const std::string key = WaiverField(waiver, "declared_at");
    json* same = nullptr;
    for (json& existing : *into) {
      if (WaiverField(existing, "declared_at") == key) same = &existing;
    }
    if (same == nullptr) {
      into->push_back(waiver);
      continue;
    }
    json& found = (*same)["found"];
    if (!found.is_array()) found = json::array();
    if (waiver.contains("found") && waiver["found"].is_array()) {
      for (const json& finding : waiver["found"]) {
        if (found.size() < kMaxWaiverFindings &&
            std::find(found.begin(), found.end(), finding) == found.end())
          found.push_back(finding);
      }
    }
    const auto count = [](const json& w) {
      return w.contains("found_count") && w["found_count"].is_number_integer()
                 ? w["found_count"].get<int>()
                 : 0;
    };
    (*same)["found_count"] = count(*same) + count(waiver);
  }
}

std::string WaiverLine(const json& waiver) {
  std::string line = WaiverField(waiver, "op") + " (" + WaiverField(waiver, "why") + ")";
  if (const std::string library = WaiverField(waiver, "library"); !library.empty())
    line += " [library " + library + "]";
  return line;
}

std::string FindingsText(const json& waiver) {
  std::string text;
  const json found = waiver.is_object() && waiver.contains("found") && waiver["found"].is_array()
                         ? waiver["found"]
                         : json::array();
  for (const json& f : found) {
    if (!f.is_object()) continue;
    const std::string file = WaiverField(f, "file");
    const json line = f.contains("line") ? f["line"] : json();
    text += (text.empty() ? "" : ", ") + (file.empty() ? WaiverField(f, "name") : file) +
            (!file.empty() && line.is_number_integer() ? ":" + line.dump() : "") + " (" +
            WaiverField(f, "source") + ")";
  }
  const json count =
      waiver.is_object() && waiver.contains("found_count") ? waiver["found_count"] : json();
  const int more =
      (count.is_number_integer() ? count.get<int>() : 0) - static_cast<int>(found.size());
  if (more > 0) text += " and " + std::to_string(more) + " more";
  return text;
}

std::string AllowanceUse::State() const {
  if (cases > 0) return "used";
  return checked ? "stale" : "unchecked";
}

std::vector<AllowanceUse> AllowanceUses(const std::vector<OperatorAllowances>& operators) {
  std::vector<AllowanceUse> uses;
  std::map<std::string, std::size_t> at;  // declared_at -> index in uses
  for (const OperatorAllowances& op : operators) {
    if (!op.declared.is_array()) continue;
    for (const json& allowance : op.declared) {
      const std::string key = WaiverField(allowance, "declared_at");
      auto found = at.find(key);
      if (found == at.end()) {
        found = at.emplace(key, uses.size()).first;
        uses.push_back({allowance, {}, 0, false});
      }
      AllowanceUse& use = uses[found->second];
      use.operators.push_back(op.op);
      use.checked = use.checked || op.checked;
      for (const json& waivers : op.case_waivers) {
        if (!waivers.is_array()) continue;
        for (const json& waiver : waivers) {
          if (WaiverField(waiver, "declared_at") == key) {
            ++use.cases;
            break;
          }
        }
      }
    }
  }
  return uses;
}

nlohmann::ordered_json AllowanceUseJson(const AllowanceUse& use) {
  nlohmann::ordered_json out;
  for (const char* key : {"op", "why", "where", "library", "declared_at"}) {
    if (!WaiverField(use.allowance, key).empty()) out[key] = WaiverField(use.allowance, key);
  }
  out["operators"] = use.operators;
  out["cases"] = use.cases;
  out["state"] = use.State();
  return out;
}

std::string StaleAllowanceLine(const AllowanceUse& use) {
  std::string names;
  for (std::size_t i = 0; i < use.operators.size() && i < 5; ++i)
    names += (i ? ", " : "") + use.operators[i];
  if (use.operators.size() > 5)
    names += " and " + std::to_string(use.operators.size() - 5) + " more";
  return "allowance " + WaiverField(use.allowance, "op") + " (" +
         WaiverField(use.allowance, "declared_at") + ") was not needed by any case of " + names +
         ": stale; remove it";
}

}  // namespace opverify
