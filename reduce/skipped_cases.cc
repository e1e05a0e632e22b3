#include "reduce/skipped_cases.h"

#include <set>
#include <sstream>
#include <string>

#include "runner/cases/cases.h"

namespace opverify {
namespace {

using nlohmann::json;

std::string Text(const json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_string()
             ? object[key].get<std::string>()
             : "";
}

}  // namespace

std::string NotRunReason(const RunInfo& info) {
  const std::string signal = info.stopped_by_signal.value_or("");
  if (!signal.empty())
    return "not run: the run was stopped by " + signal + " first (--resume runs it)";
  if (info.stopped_by_time_limit)
    return "not run: the run's --time-limit ran out first (--resume runs it)";
  if (info.stopped_by_maxfail) {
    const int max = *info.stopped_by_maxfail;
    return "not run: the run stopped after " + std::to_string(max) + " failed case" +
           (max == 1 ? "" : "s") + " (--maxfail " + std::to_string(max) + "; --resume runs it)";
  }
  return "not run: no result was stored";
}

bool IsNotRun(const SkippedCase& skipped) { return skipped.reason.rfind("not run", 0) == 0; }

void AddSkippedCases(const json& selection, RunModel* run) {
  if (!selection.is_object() || !selection.contains("operators") ||
      !selection["operators"].is_array())
    return;
  const std::string not_run = NotRunReason(run->info);
  std::map<std::string, const OperatorModel*> models;
  for (const OperatorModel& op : run->operators) models[op.name] = &op;
  for (const json& entry : selection["operators"]) {
    const std::string name = Text(entry, "name");
    if (name.empty()) continue;
    const json& cases = entry.contains("cases") ? entry["cases"] : json(nullptr);
    if (!entry.value("selected", true)) {
      const std::string why = "left out by the selection: " + Text(entry, "reason");
      if (!cases.is_array()) run->skipped.push_back({name, name, why});
      for (const json& id : cases.is_array() ? cases : json::array()) {
        if (id.is_string()) run->skipped.push_back({name, id.get<std::string>(), why});
      }
      continue;
    }
    const auto model = models.find(name);
    std::set<std::string> stored;
    OperatorFacts facts;
    if (model != models.end()) {
      for (const CaseRecord& c : model->second->cases) stored.insert(c.case_id);
      facts = model->second->facts;
    } else if (const auto only = run->facts_without_cases.find(name);
               only != run->facts_without_cases.end()) {
      facts = only->second;
    }
    const std::map<std::string, std::string>& left_out = facts.left_out;
    std::set<std::string> named(stored);
    auto add = [&](const std::string& id, const std::string& reason) {
      if (!named.insert(id).second) return;
      run->skipped.push_back({name, id, reason});
    };
    for (const json& c : cases.is_array() ? cases : json::array()) {
      const std::string id = c.is_string() ? c.get<std::string>() : Text(c, "id");
      if (c.is_object() && c.contains("left_out")) {
        add(id, "left out by the selection: " + Text(c, "left_out"));
      } else if (const auto why = left_out.find(id); why != left_out.end()) {
        add(id, "left out by the selection: " + why->second);
      } else {
        add(id, not_run);
      }
    }
    for (const auto& [id, why] : left_out) add(id, "left out by the selection: " + why);
    if (cases.is_array()) continue;
    // The task's own cases: as many as its record counted once loaded.
    const int count = facts.case_count.value_or(-1);
    if (count < 0) {
      if (stored.empty()) add(name, not_run);  // never loaded
      continue;
    }
    int missing = count - static_cast<int>(named.size());
    for (int i = 0; i < count && missing > 0; ++i) {
      const std::string id = CaseId(name, nullptr, i);
      if (named.count(id) > 0) continue;
      add(id, not_run);
      --missing;
    }
  }
}

namespace {

// A line for the ranks that left the run early, then one for each of them.
std::vector<std::string> RanksLeftLines(const RunModel& run) {
  const std::size_t count = run.info.ranks_left.size();
  std::vector<std::string> lines = {
      std::to_string(count) + (count == 1 ? " rank" : " ranks") +
      " left the run early; the others went on. " + std::to_string(run.info.unassigned_items) +
      " work items were never started; this report covers the " + std::to_string(run.totals.cases) +
      " cases stored. The same command with --resume runs the rest."};
  for (const RankLeft& left : run.info.ranks_left) {
    lines.push_back(
        "rank " + std::to_string(left.rank) + " left: " + left.reason +
        (left.lost_item ? "; the work item it held (" + left.lost_item->op + ") is lost" : ""));
  }
  return lines;
}

// Seconds as a person writes them: "12", "21600", "12.5".
std::string SecondsText(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

}  // namespace

std::vector<std::string> StoppedEarlyLines(const RunModel& run) {
  std::vector<std::string> lines;
  const std::string unassigned = std::to_string(run.info.unassigned_items);
  if (run.info.stopped_by_signal || run.info.stopped_by_time_limit) {
    const std::string cause =
        run.info.stopped_by_signal
            ? *run.info.stopped_by_signal
            : "--time-limit (" + SecondsText(*run.info.stopped_by_time_limit) + " s)";
    lines.push_back(
        "Stopped by " + cause + ": " + unassigned +
        " work items were never started and the cases in flight were abandoned (not run, not "
        "failures); this report covers the " +
        std::to_string(run.totals.cases) +
        " cases stored. The same command with --resume runs the rest.");
  } else if (run.info.stopped_by_maxfail) {
    const std::string max = std::to_string(*run.info.stopped_by_maxfail);
    lines.push_back("Stopped after " + max + " failed cases (--maxfail " + max +
                    "): " + unassigned +
                    " work items were never started and the cases not yet begun were left (not "
                    "run, not failures); this report covers the " +
                    std::to_string(run.totals.cases) +
                    " cases that ran. The same command with --resume runs the rest.");
  } else if (!run.info.ranks_left.empty()) {
    lines = RanksLeftLines(run);
  } else {
    return lines;
  }
  for (const OperatorModel& op : run.operators) {
    const int stored = op.passed + op.waived + op.failed;
    const int count = op.facts.case_count.value_or(0);
    if (count > stored) {
      lines.push_back(op.name + ": " + std::to_string(stored) + " of " + std::to_string(count) +
                      " cases stored, " + std::to_string(count - stored) + " not run");
    }
  }
  return lines;
}

}  // namespace opverify
