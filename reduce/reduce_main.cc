// opverify-reduce: every report of a run folder rebuilt from its HDF5 shards
// alone (after a crash, or to merge runs), and the comparison with an
// earlier run: the release-qualification gate.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reduce/baseline_diff.h"
#include "reduce/report_file.h"
#include "reduce/run_report.h"
#include "runner/cli/usage.h"
#include "runner/common/version.h"
#include "runner/store/results_index.h"
#include "runner/store/shard_merge.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// What the batch recorded of itself (manifest, ranks, timing), when its summary is there.
json PreviousRunInfo(const fs::path& run_dir) {
  std::ifstream in(run_dir / "summary.json");
  if (!in) return json::object();
  std::stringstream text;
  text << in.rdbuf();
  json summary = json::parse(text.str(), nullptr, false);
  json info = json::object();
  if (!summary.is_object()) return info;
  for (const char* key :
       {"manifest", "manifest_name", "ranks", "launcher", "backend", "store", "resumed", "timing",
        "shard", "stopped_by_signal", "unassigned_items", "compiler_cache"}) {
    if (summary.contains(key)) info[key] = summary[key];
  }
  return info;
}

// What the parts of a merged run recorded: the first part's manifest and
// settings, every part's ranks, and whether a signal stopped any of them.
json MergedRunInfo(const std::vector<std::string>& parts) {
  json info = json::object();
  int ranks = 0, unassigned = 0;
  json from = json::array();
  for (const std::string& part : parts) {
    const json part_info = PreviousRunInfo(part);
    for (const char* key :
         {"manifest", "manifest_name", "launcher", "backend", "store", "stopped_by_signal"}) {
      if (!info.contains(key) && part_info.contains(key)) info[key] = part_info[key];
    }
    ranks += part_info.value("ranks", 0);
    unassigned += part_info.value("unassigned_items", 0);
    from.push_back(fs::absolute(part).lexically_normal().string());
  }
  if (ranks > 0) info["ranks"] = ranks;
  if (info.contains("stopped_by_signal")) info["unassigned_items"] = unassigned;
  info["merged_from"] = from;
  return info;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("opverify-reduce"));
  CLI::App app{
      "opverify-reduce: rebuild a run's reports from its HDF5 shards; compare with a baseline run"};
  opverify::DescribeProgram(
      app,
      "  0  reports written (no regression against --baseline)\n"
      "  1  a regression against --baseline\n  2  bad usage, or unreadable shards");
  std::string run_dir, baseline;
  double threshold_pct = 5;
  app.add_option("RUN_DIR", run_dir, "The run folder (with shards/)")->required();
  std::vector<std::string> parts;
  app.add_option("--merge", parts,
                 "Run folders whose shards make up RUN_DIR (the --shard I/N parts of one sweep, "
                 "e.g. a Slurm job array's); RUN_DIR is created, or remade if an earlier merge "
                 "made it")
      ->check(CLI::ExistingDirectory);
  app.add_option("--baseline", baseline, "An earlier run folder to compare with");
  app.add_option("--perf-threshold", threshold_pct,
                 "Percent change of latency that counts (and the spread must be exceeded too)")
      ->check(CLI::NonNegativeNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  std::vector<std::string> problems;
  if (!parts.empty()) {
    std::error_code error;
    fs::create_directories(run_dir, error);
    if (opverify::Status merged = opverify::MergeShards(run_dir, parts, &problems); !merged.ok()) {
      std::fprintf(stderr, "opverify-reduce: --merge: %s\n", merged.ToString().c_str());
      return 2;
    }
  }
  if (!fs::is_directory(fs::path(run_dir) / "shards")) {
    std::fprintf(stderr, "opverify-reduce: %s: not a run folder (no shards/)\n", run_dir.c_str());
    return 2;
  }
  if (!baseline.empty() && !fs::is_regular_file(fs::path(baseline) / "summary.json")) {
    std::fprintf(stderr, "opverify-reduce: --baseline %s: no summary.json there\n",
                 baseline.c_str());
    return 2;
  }
  if (opverify::Status indexed = opverify::WriteResultsIndex(run_dir, &problems); !indexed.ok()) {
    std::fprintf(stderr, "opverify-reduce: results.h5: %s\n", indexed.ToString().c_str());
    return 2;
  }
  for (const auto& problem : problems) spdlog::warn("{}", problem);
  json run_info = parts.empty() ? PreviousRunInfo(run_dir) : MergedRunInfo(parts);
  run_info["reduced_by"] = "opverify-reduce";
  run_info["reduced_with"] = {{"version", opverify::Version()}, {"commit", opverify::GitCommit()}};
  opverify::Result<opverify::RunTotals> totals = opverify::WriteRunReports(run_dir, run_info);
  if (!totals.ok()) {
    std::fprintf(stderr, "opverify-reduce: %s\n", totals.status().ToString().c_str());
    return 2;
  }
  std::printf("%d operators, %d cases: %d passed, %d failed -> %s\n", totals->operators,
              totals->cases, totals->passed, totals->failed,
              (fs::path(run_dir) / "summary.json").c_str());
  if (baseline.empty()) return 0;

  opverify::Result<opverify::BaselineDiff> diff =
      opverify::DiffRuns(run_dir, baseline, threshold_pct / 100);
  if (!diff.ok()) {
    std::fprintf(stderr, "opverify-reduce: %s\n", diff.status().ToString().c_str());
    return 2;
  }
  const std::string report_path = (fs::path(run_dir) / "baseline_diff.json").string();
  if (opverify::Status written = opverify::WriteReportJson(report_path, diff->ToJson());
      !written.ok()) {
    std::fprintf(stderr, "opverify-reduce: %s\n", written.ToString().c_str());
    return 2;
  }
  const auto list = [](const char* what, const std::vector<std::string>& names) {
    if (names.empty()) return;
    std::printf("%s:", what);
    for (const auto& n : names) std::printf(" %s", n.c_str());
    std::printf("\n");
  };
  list("newly failing", diff->newly_failing);
  list("fixed", diff->fixed);
  for (const auto& c : diff->slower) {
    std::printf("slower: %s %.1f%% (spread %.1f%%, %d shapes)\n", c.op.c_str(), (c.ratio - 1) * 100,
                c.spread * 100, c.shapes);
  }
  for (const auto& c : diff->faster) {
    std::printf("faster: %s %.1f%% (spread %.1f%%, %d shapes)\n", c.op.c_str(), (c.ratio - 1) * 100,
                c.spread * 100, c.shapes);
  }
  list("new", diff->added);
  list("missing", diff->missing);
  std::printf("%s -> %s\n", diff->regressed() ? "REGRESSED" : "no regression", report_path.c_str());
  return diff->regressed() ? 1 : 0;
}
