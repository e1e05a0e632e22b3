// The reports of a large run made from a small real one, for report.html at
// the scale of a nightly sweep (tests/python/test_report_scale.py): every
// stored record of SRC_RUN (cases, operator facts, benchmarked shapes and
// items, as opverify-batch stored them, read by the store's reader) is
// taken COPIES times, operator `op` becoming `op_0001` ... `op_<COPIES>`;
// the run model is built from them (BuildRunModel) and every report is
// written into OUT_DIR by opverify-reduce's own path (WriteModelReports),
// with `--history FILE` appended and drawn as there. SRC_RUN's summary.json
// run-level fields (timing, ranks; not the manifest, whose names would not
// match) are the run's, and its timeline COPIES times over.
//
//   reports_at_scale SRC_RUN OUT_DIR COPIES [HISTORY_FILE]
//
// Exit 0 when done, 3 with "error: <message>", 2 on bad arguments. It
// skips the HDF5 store on purpose: writing and reading 24,000 records is
// the store's cost (tests/unit/shard_test.cc), not the reports'.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "reduce/performance_flags.h"
#include "reduce/run_report.h"
#include "runner/common/strings.h"
#include "runner/store/run_records.h"

namespace opverify {
namespace {

int Fail(const Status& status) {
  std::printf("error: %s\n", status.ToString().c_str());
  return 3;
}

// `id` ("op/...", the prefix every record id of `op` has) for the copy named `name`.
std::string Renamed(const std::string& id, const std::string& op, const std::string& name) {
  return id.rfind(op + "/", 0) == 0 ? name + id.substr(op.size()) : id;
}

// The source run's timeline `copies` times over, one copy after another on
// the same ranks, each item's operator renamed as its records are.
nlohmann::json TimelineCopies(const nlohmann::json& timeline, int copies) {
  const double wall_s = timeline.value("wall_s", 0.0);
  nlohmann::json items = nlohmann::json::array();
  for (int k = 1; k <= copies; ++k) {
    for (nlohmann::json item : timeline.value("items", nlohmann::json::array())) {
      item["op"] = item.value("op", std::string()) + Printf("_%04d", k);
      for (const char* key : {"start_s", "end_s"})
        item[key] = item.value(key, 0.0) + (k - 1) * wall_s;
      items.push_back(std::move(item));
    }
  }
  return {{"ranks", timeline.value("ranks", 1)}, {"wall_s", copies * wall_s}, {"items", items}};
}

int Run(const std::string& source, const std::string& out, int copies, const std::string& history) {
  Result<std::vector<CaseRecord>> records = ReadRunRecords(source);
  if (!records.ok()) return Fail(records.status());
  std::vector<CaseRecord> many;
  many.reserve(records->size() * static_cast<std::size_t>(copies));
  for (int k = 1; k <= copies; ++k) {
    for (const CaseRecord& record : records.value()) {
      CaseRecord copy = record;
      const std::string name = copy.op_name + Printf("_%04d", k);
      copy.case_id = Renamed(copy.case_id, record.op_name, name);
      if (copy.extra.is_object() && copy.extra.contains("case_id") &&
          copy.extra["case_id"].is_string()) {
        copy.extra["case_id"] =
            Renamed(copy.extra["case_id"].get<std::string>(), record.op_name, name);
      }
      copy.op_name = name;
      many.push_back(std::move(copy));
    }
  }
  std::ifstream in(std::filesystem::path(source) / "summary.json");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json summary = nlohmann::json::parse(text.str(), nullptr, false);
  nlohmann::json info = nlohmann::json::object();
  for (const char* key :
       {"manifest_name", "ranks", "launcher", "backend", "store", "timing", "opverify"}) {
    if (summary.is_object() && summary.contains(key)) info[key] = summary[key];
  }
  if (summary.is_object() && summary.contains("timeline"))
    info["timeline"] = TimelineCopies(summary["timeline"], copies);
  std::error_code error;
  std::filesystem::create_directories(out, error);
  const std::string dir = std::filesystem::absolute(out).string();
  PerformanceFlags flags;
  flags.history = history;
  int performance = 0;
  Result<RunTotals> totals =
      WriteModelReports(BuildRunModel(std::move(many), {}, info, dir), dir, nullptr,
                        [&](const RunModel& run, ReportExtras* extras) {
                          if (!history.empty()) performance = CheckPerformance(flags, run, extras);
                        });
  if (!totals.ok()) return Fail(totals.status());
  if (performance == 2) return Fail(Status::InvalidInput(history + ": the history failed"));
  std::printf("%d operators, %d cases, %d failed -> %s/report.html\n", totals->operators,
              totals->cases, totals->failed, dir.c_str());
  return 0;
}

}  // namespace
}  // namespace opverify

int main(int argc, char** argv) {
  const int copies = argc == 4 || argc == 5 ? std::atoi(argv[3]) : 0;
  if (copies < 1) {
    std::fprintf(stderr, "usage: %s SRC_RUN OUT_DIR COPIES [HISTORY_FILE] (COPIES >= 1)\n",
                 argv[0]);
    return 2;
  }
  return opverify::Run(argv[1], argv[2], copies, argc == 5 ? argv[4] : "");
}
