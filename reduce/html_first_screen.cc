// report.html's first screen: what a person reading a nightly sweep looks
// for before scrolling. The totals, the failures grouped by error type and
// A/B class (their first cases linked to the grid), the comparison with the
// baseline and the references, and the environment the run ran in.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "reduce/html_page.h"
#include "reduce/operator_triage.h"
#include "reduce/text_escape.h"
#include "runner/common/utf8.h"

namespace opverify::html {
namespace {

using nlohmann::json;

constexpr std::size_t kCasesPerGroup = 6;  // cases shown per failure group
constexpr std::size_t kNamesPerList = 25;  // operators shown per baseline list
constexpr std::size_t kOperatorRows = 500;  // failing operators shown, one row each

std::string AbClass(const FailureRow& f) { return f.AbClass().value_or("not classified"); }

// Real defects first, reference suspects (no regression) last.
int ClassRank(const std::string& ab) {
  static const std::map<std::string, int> rank = {{"real_defect", 0},
                                                  {"compiler_suspect", 1},
                                                  {"nondeterministic", 2},
                                                  {"not classified", 3},
                                                  {"reference_suspect", 5}};
  const auto found = rank.find(ab);
  return found == rank.end() ? 4 : found->second;
}

std::string OperatorLink(const std::string& name, const std::string& text) {
  return "<a href=\"#" + MarkupEscape(OperatorAnchor(name)) + "\">" + MarkupEscape(text) + "</a>";
}

void Totals(std::ostringstream& html, const RunModel& run) {
  const RunTotals& t = run.totals;
  std::set<std::string> failing;
  for (const FailureRow& f : run.failures) failing.insert(f.op);
  html << "<p class=\"totals\" id=\"totals\">" << t.operators << " operators, " << t.cases
       << " cases: " << t.passed << " passed, ";
  if (t.waived > 0)
    html << "<a class=\"waived\" href=\"#declared-exceptions\">" << t.waived << " waived</a>, ";
  html << "<span class=\"" << (t.failed > 0 ? "bad" : "") << "\">" << t.failed << " failed</span>";
  if (!failing.empty()) html << " (in " << failing.size() << " operators)";
  if (!run.skipped.empty()) html << ", " << run.skipped.size() << " not run";
  if (run.performance.geomean_speedup)
    html << "; geometric mean speedup " << SpeedupText(run.performance.geomean_speedup);
  html << ".</p>\n";
}

void NameList(std::ostringstream& html, const char* what, const char* css,
              const std::vector<std::string>& names) {
  if (names.empty()) return;
  html << "<li class=\"" << css << "\">" << what << " (" << names.size() << "): ";
  for (std::size_t i = 0; i < names.size() && i < kNamesPerList; ++i)
    html << (i == 0 ? "" : ", ") << OperatorLink(names[i], names[i]);
  if (names.size() > kNamesPerList) html << " and " << names.size() - kNamesPerList << " more";
  html << "</li>\n";
}

// One list of SinceWhen: the operators grouped by since when they fail, the
// largest groups first, a few names each (the first screen stays short).
void Streaks(std::ostringstream& html, const char* what, const std::vector<FailingStreak>& list) {
  constexpr std::size_t kGroups = 3, kNames = 6;
  std::map<std::pair<std::string, int>, std::vector<const std::string*>> groups;
  for (const FailingStreak& s : list) groups[{s.since, s.nights}].push_back(&s.op);
  std::vector<std::pair<const std::pair<std::string, int>*, const std::vector<const std::string*>*>>
      order;
  for (const auto& [key, ops] : groups) order.emplace_back(&key, &ops);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second->size() > b.second->size();
  });
  html << "<li class=\"bad\">" << what << " (" << list.size() << ")" << (list.empty() ? "" : ":");
  for (std::size_t g = 0; g < order.size() && g < kGroups; ++g) {
    const auto& [since, nights] = *order[g].first;
    const auto& ops = *order[g].second;
    html << (g == 0 ? " " : "; ") << "<b>since " << MarkupEscape(since) << " (" << nights
         << (nights == 1 ? " night)" : " nights)") << "</b> ";
    for (std::size_t i = 0; i < ops.size() && i < kNames; ++i)
      html << (i == 0 ? "" : ", ") << OperatorLink(*ops[i], *ops[i]);
    if (ops.size() > kNames) html << " and " << ops.size() - kNames << " more";
  }
  if (order.size() > kGroups) html << "; and " << order.size() - kGroups << " more dates";
  html << "</li>\n";
}

// Tonight against the --history file: the still failing (since when)
// beside the newly failing and the newly passing, first names linked.
void SinceWhen(std::ostringstream& html, const ReportExtras& extras) {
  if (!extras.trend) return;
  const VerdictTrend& t = *extras.trend;
  html << "<div id=\"since-when\"><ul class=\"diff\">\n";
  Streaks(html, "still failing", t.still_failing);
  Streaks(html, "newly failing", t.newly_failing);
  NameList(html, "newly passing", "good", t.newly_passing);
  html << "</ul><p class=\"note\">Against " << t.nights << " earlier nights of <code>"
       << MarkupEscape(t.file) << "</code>.</p></div>\n";
}

// The failing operators, one row each (reduce/operator_triage.h), linked to
// the grid; since when each fails, with --history.
void FailingOperators(std::ostringstream& html, const RunModel& run, const ReportExtras& extras) {
  const std::vector<OperatorTriage> triage = TriageByOperator(run);
  const VerdictTrend* trend = extras.trend ? &*extras.trend : nullptr;
  html << "<table id=\"failing-operators\">\n<tr><th>operator</th><th>failed</th><th>error "
          "(A/B of the first)</th>"
       << (trend ? "<th>since</th>" : "") << "<th>first failure</th><th>repro</th></tr>\n";
  for (std::size_t i = 0; i < triage.size() && i < kOperatorRows; ++i) {
    const OperatorTriage& t = triage[i];
    html << "<tr><td>" << OperatorLink(t.op, t.op) << "</td><td>" << t.failed << "/" << t.cases
         << "</td><td>" << MarkupEscape(t.error_type)
         << (t.ab.empty() ? "" : " (" + MarkupEscape(t.ab) + ")") << "</td><td>";
    if (trend) html << MarkupEscape(FailingSinceText(*trend, t.op)) << "</td><td>";
    html << MarkupEscape(t.first_case_id) << ": " << MarkupEscape(Utf8Prefix(t.first_message, 160))
         << "</td><td><code>" << MarkupEscape(t.repro) << "</code></td></tr>\n";
  }
  html << "</table>\n";
  if (triage.size() > kOperatorRows)
    html << "<p class=\"note\">and " << triage.size() - kOperatorRows
         << " more failing operators (report.md lists them all)</p>\n";
}

void FailureGroups(std::ostringstream& html, const RunModel& run, const ReportExtras& extras) {
  html << "<section id=\"failure-groups\"><h2>Failures</h2>\n";
  if (run.failures.empty()) {
    html << "<p id=\"no-failures\">None.</p></section>\n";
    return;
  }
  struct Group {
    std::vector<const FailureRow*> cases;
    std::set<std::string> operators;
  };
  std::map<std::pair<std::string, std::string>, Group> groups;  // (error type, A/B class)
  for (const FailureRow& f : run.failures) {
    Group& g = groups[{f.error_type.text(), AbClass(f)}];
    g.cases.push_back(&f);
    g.operators.insert(f.op);
  }
  std::vector<std::pair<const std::pair<std::string, std::string>*, const Group*>> order;
  for (const auto& [key, group] : groups) order.emplace_back(&key, &group);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::make_tuple(ClassRank(a.first->second), -static_cast<long>(a.second->cases.size())) <
           std::make_tuple(ClassRank(b.first->second), -static_cast<long>(b.second->cases.size()));
  });
  html << "<table id=\"failure-summary\">\n<tr><th>error</th><th>A/B</th><th>cases</th>"
          "<th>operators</th><th>first cases (message of the first)</th></tr>\n";
  bool first_row = true;
  for (const auto& [key, group] : order) {
    html << "<tr class=\"fg\"><td>" << MarkupEscape(key->first) << "</td><td>"
         << MarkupEscape(key->second) << "</td><td>" << group->cases.size() << "</td><td>"
         << group->operators.size() << "</td><td>";
    for (std::size_t i = 0; i < group->cases.size() && i < kCasesPerGroup; ++i) {
      const FailureRow& f = *group->cases[i];
      html << (i == 0 ? "" : ", ") << "<a class=\"fcase\""
           << (first_row ? " id=\"first-failure\"" : "") << " href=\"#"
           << MarkupEscape(OperatorAnchor(f.op)) << "\">" << MarkupEscape(f.case_id) << "</a>";
      first_row = false;
    }
    if (group->cases.size() > kCasesPerGroup)
      html << " and " << group->cases.size() - kCasesPerGroup << " more";
    const std::string& message = group->cases.front()->message;
    html << "<div class=\"msg\">" << MarkupEscape(message.substr(0, 160))
         << (message.size() > 160 ? "&hellip;" : "") << "</div></td></tr>\n";
  }
  html << "</table>\n";
  FailingOperators(html, run, extras);
  html << "<p class=\"note\">Every failure with its message and repro command: <a "
          "href=\"#failures\">Failures in full</a>; by operator: the grid below.</p></section>\n";
}

// The waived cases (passed under declared exceptions) by allowance, and the
// allowances nothing needed: exceptions stay visible, and go stale visibly.
void DeclaredExceptions(std::ostringstream& html, const RunModel& run) {
  const std::vector<std::string> stale = run.StaleAllowanceLines();
  if (run.waived.empty() && stale.empty()) return;
  html << "<section id=\"declared-exceptions\"><h2>Declared exceptions</h2>\n";
  if (!run.waived.empty()) {
    html
        << "<p>" << run.waived.size()
        << " cases passed as <b>waived</b>: judged for accuracy, and using torch operators the "
           "manifest allows (<code>allow_torch</code>).</p>\n<table id=\"waived\">\n<tr><th>allowed"
           "</th><th>why</th><th>cases</th><th>found at</th></tr>\n";
    for (const AllowanceUse& use : run.allowances) {
      if (use.cases == 0) continue;
      std::string cases, found;
      std::size_t shown = 0;
      for (const WaivedRow& w : run.waived) {
        if (!w.waivers.is_array()) continue;
        for (const json& waiver : w.waivers) {
          if (WaiverField(waiver, "declared_at") != WaiverField(use.allowance, "declared_at"))
            continue;
          if (found.empty()) found = FindingsText(waiver);
          if (++shown <= kCasesPerGroup)
            cases += (cases.empty() ? "" : ", ") + OperatorLink(w.op, w.case_id);
        }
      }
      if (shown > kCasesPerGroup)
        cases += " and " + std::to_string(shown - kCasesPerGroup) + " more";
      html << "<tr class=\"waived\"><td><code>" << MarkupEscape(WaiverField(use.allowance, "op"))
           << "</code></td><td>" << MarkupEscape(WaiverField(use.allowance, "why")) << "</td><td>"
           << cases << "</td><td>" << MarkupEscape(found) << "</td></tr>\n";
    }
    html << "</table>\n";
  }
  if (!stale.empty()) {
    html << "<p>Stale allowances (no case needed them: remove them):</p>\n<ul "
            "id=\"stale-allowances\">\n";
    for (const std::string& line : stale)
      html << "<li class=\"bad\">" << MarkupEscape(line) << "</li>\n";
    html << "</ul>\n";
  }
  html << "</section>\n";
}

void SpeedList(std::ostringstream& html, const char* what, const char* css,
               std::vector<SpeedChange> changes) {
  if (changes.empty()) return;
  // The largest change first.
  std::sort(changes.begin(), changes.end(), [](const SpeedChange& a, const SpeedChange& b) {
    return std::fabs(std::log(a.ratio)) > std::fabs(std::log(b.ratio));
  });
  html << "<li class=\"" << css << "\">" << what << " (" << changes.size() << "): ";
  for (std::size_t i = 0; i < changes.size() && i < kNamesPerList; ++i) {
    const SpeedChange& c = changes[i];
    html << (i == 0 ? "" : ", ") << OperatorLink(c.op, c.op) << " " << (c.ratio > 1 ? "+" : "")
         << Fixed((c.ratio - 1) * 100, 1) << "% <span class=\"note\">(noise floor "
         << Fixed(c.noise_floor * 100, 1) << "%)</span>";
  }
  if (changes.size() > kNamesPerList) html << " and " << changes.size() - kNamesPerList << " more";
  html << "</li>\n";
}

void Regressions(std::ostringstream& html, const ReportExtras& extras) {
  html << "<section id=\"regressions\"><h2>Against the baseline</h2>\n";
  if (!extras.baseline) {
    html << "<p class=\"note\">No baseline: <code>opverify-reduce RUN_DIR --baseline "
            "OLD_RUN_DIR</code> compares with one.</p>\n";
  } else {
    const BaselineDiff& d = *extras.baseline;
    html << "<p>Against <code>" << MarkupEscape(extras.baseline_dir) << "</code>: <span class=\""
         << (d.regressed() ? "bad\" id=\"regressed\">REGRESSED"
                           : "good\" id=\"regressed\">no regression")
         << "</span></p>\n<ul class=\"diff\">\n";
    NameList(html, "newly failing", "bad", d.newly_failing);
    SpeedList(html, "slower", "bad", d.slower);
    NameList(html, d.allow_missing ? "missing (allowed)" : "missing", d.allow_missing ? "" : "bad",
             d.missing);
    NameList(html, "reference_suspect (failing, no regression)", "", d.reference_suspect);
    NameList(html, "fixed", "good", d.fixed);
    SpeedList(html, "faster", "good", d.faster);
    NameList(html, "new", "", d.added);
    html << "</ul>\n";
  }
  if (extras.references) {
    const ReferenceCheck& r = *extras.references;
    html << "<p id=\"references\">References: " << r.results.size() << " checked, <span class=\""
         << (r.violations > 0 ? "bad" : "") << "\">" << r.violations
         << " outside their bounds</span>, " << r.unmeasured << " not measured.</p>\n";
    std::size_t shown = 0;
    html << "<ul>\n";
    for (const ReferenceResult& result : r.results) {
      if (!result.violated || ++shown > kNamesPerList) continue;
      html << "<li class=\"bad\">" << MarkupEscape(result.message) << "</li>\n";
    }
    if (shown > kNamesPerList) html << "<li>and " << shown - kNamesPerList << " more</li>\n";
    html << "</ul>\n";
  }
  html << "</section>\n";
}

// The distinct values of one environment field over the operators: "v" or "v1 (3), v2 (1)".
std::string Distinct(const RunModel& run, const std::vector<const char*>& path) {
  std::map<std::string, int> values;
  for (const OperatorModel& op : run.operators) {
    const json* at = &op.facts.environment;
    for (const char* key : path) {
      at = at != nullptr && at->is_object() && at->contains(key) ? &(*at)[key] : nullptr;
    }
    if (at != nullptr && (at->is_string() || at->is_number())) {
      values[at->is_string() ? at->get<std::string>() : at->dump()] += 1;
    }
  }
  if (values.size() == 1) return values.begin()->first;
  std::string text;
  for (const auto& [value, count] : values)
    text += (text.empty() ? "" : ", ") + value + " (" + std::to_string(count) + " operators)";
  return text;
}

void Environment(std::ostringstream& html, const RunModel& run) {
  const RunInfo& info = run.info;
  std::vector<std::pair<std::string, std::string>> rows;
  const auto add = [&rows](const char* what, const std::string& value) {
    if (!value.empty()) rows.emplace_back(what, value);
  };
  std::string device = Distinct(run, {"device", "name"});
  if (const std::string backend = Distinct(run, {"device", "backend"}); !backend.empty())
    device += (device.empty() ? "" : " (") + backend + (device.empty() ? "" : ")");
  add("device", device);
  add("driver", Distinct(run, {"cuda", "driver_version"}));
  add("CUDA", Distinct(run, {"cuda", "version"}));
  add("CANN", Distinct(run, {"cann", "version"}));
  add("torch", Distinct(run, {"torch", "version"}));
  std::string triton = Distinct(run, {"triton", "version"});
  if (triton.empty() && !run.operators.empty()) triton = "not found";
  add("triton", triton);
  add("opverify", RunVersionLine(info));
  if (const std::optional<BuildStamp>& r = info.reduced_with) {
    add("reduced by",
        "opverify-reduce " + r->version.value_or("?") + " (" + r->commit.value_or("?") + ")");
  }
  if (info.manifest) {
    add("manifest", *info.manifest + (info.manifest_name ? " (" + *info.manifest_name + ")" : ""));
  }
  add("run folder", run.run_dir);
  if (info.timing && info.timing->run_wall_s) {
    const double s = *info.timing->run_wall_s;
    add("duration", s >= 120 ? Fixed(s / 60, 1) + " min" : Fixed(s, 1) + " s");
  }
  std::string ranks;
  if (info.ranks) ranks = std::to_string(*info.ranks) + (*info.ranks == 1 ? " rank" : " ranks");
  if (info.launcher) ranks += (ranks.empty() ? "" : ", launcher ") + *info.launcher;
  add("ranks", ranks);
  html << "<section id=\"environment\"><h2>Environment</h2>\n<table class=\"env\">\n";
  for (const auto& [what, value] : rows) {
    html << "<tr><th>" << what << "</th><td>" << MarkupEscape(value) << "</td></tr>\n";
  }
  html << "</table></section>\n";
}

}  // namespace

void FirstScreen(std::ostringstream& html, const RunModel& run, const ReportExtras& extras) {
  Totals(html, run);
  SinceWhen(html, extras);
  html << "<div class=\"first\">\n<div>\n";
  FailureGroups(html, run, extras);
  DeclaredExceptions(html, run);
  html << "</div>\n<div>\n";
  Regressions(html, extras);
  Environment(html, run);
  html << "</div>\n</div>\n";
}

}  // namespace opverify::html
