#include "reduce/performance_flags.h"

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reduce/history.h"
#include "reduce/references.h"
#include "reduce/report_file.h"

namespace opverify {
namespace {

std::string TodayUtc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &utc);
  return text;
}

// The commit of the build that ran the run (summary.json's opverify block).
std::string RunCommit(const RunModel& run) {
  return run.info.opverify ? run.info.opverify->commit.value_or("unknown") : "unknown";
}

}  // namespace

void AddPerformanceFlags(CLI::App& app, PerformanceFlags* flags) {
  app.add_option(
         "--references", flags->references,
         "Performance references: {DEVICE or \"*\": {OPERATOR or CASE_ID: {\"latency_ms\": R, "
         "\"lower\": -0.1, \"upper\": 0.1}}}; a latency outside R*(1+lower)..R*(1+upper) is a "
         "PerformanceError (exit 1), each check in reference_check.json")
      ->check(CLI::ExistingFile);
  app.add_option(
      "--history", flags->history,
      "A history file (JSON lines) to append one line per operator and night to: its "
      "verdict, the run's date and versions (runner, libraries), its geometric-mean latency; "
      "the reports say since when each failing operator fails");
  app.add_option(
      "--history-commit", flags->history_commit,
      "The commit a --history line records (default: the commit of the build that ran the run)");
}

int CheckPerformance(const PerformanceFlags& flags, const RunModel& run, ReportExtras* extras) {
  int code = 0;
  if (!flags.references.empty()) {
    std::ifstream in(flags.references);
    std::stringstream text;
    text << in.rdbuf();
    const nlohmann::json references = nlohmann::json::parse(text.str(), nullptr, false);
    if (references.is_discarded()) {
      std::fprintf(stderr, "opverify-reduce: --references %s: not valid JSON\n",
                   flags.references.c_str());
      return 2;
    }
    Result<ReferenceCheck> check = CheckReferences(run, references);
    if (!check.ok()) {
      std::fprintf(stderr, "opverify-reduce: --references %s: %s\n", flags.references.c_str(),
                   check.status().ToString().c_str());
      return 2;
    }
    const std::string path = (std::filesystem::path(run.run_dir) / "reference_check.json").string();
    if (Status written = WriteReportJson(path, check->ToJson()); !written.ok()) {
      std::fprintf(stderr, "opverify-reduce: %s\n", written.ToString().c_str());
      return 2;
    }
    for (const ReferenceResult& r : check->results) {
      if (r.violated) std::printf("%s\n", r.message.c_str());
    }
    std::printf("references: %zu checked, %d outside their bounds, %d not measured -> %s\n",
                check->results.size(), check->violations, check->unmeasured, path.c_str());
    if (check->violations > 0) code = 1;
    if (extras != nullptr) extras->references = std::move(check).value();
  }
  if (!flags.history.empty()) {
    const NightVersions night = NightOf(run, TodayUtc());
    const std::string commit = flags.history_commit.empty() ? RunCommit(run) : flags.history_commit;
    Result<History> history = UpdateHistory(flags.history, run, night, commit);
    if (!history.ok()) {
      std::fprintf(stderr, "opverify-reduce: --history: %s (the reports are written without it)\n",
                   history.status().ToString().c_str());
      return 2;
    }
    for (const std::string& warning : history->warnings)
      std::fprintf(stderr, "warning: --history: %s\n", warning.c_str());
    std::printf("history: %d operators appended (night of %s) -> %s\n", history->appended,
                night.date.c_str(), flags.history.c_str());
    if (extras != nullptr) {
      extras->history = LatencyHistory(history->rows, run);
      extras->trend = TrendOf(history->rows, run, night, flags.history);
    }
  }
  return code;
}

}  // namespace opverify
