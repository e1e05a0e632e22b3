// Every report survives every verdict and every record: records of each
// kind (a case of every error type, an operator's facts, a benchmark work
// item and shape) with each of their JSON fields missing, null or of every
// other type are written to a real shard, read back, and every reporter of
// the batch and of opverify-reduce (the baseline diff, the console lists)
// writes its files. A record the readers cannot use is one problem naming
// it; every other record is in the reports.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reduce/baseline_diff.h"
#include "reduce/run_report.h"
#include "runner/common/strings.h"
#include "runner/store/shard_writer.h"
#include "tests/support/scratch_dir_test.h"

namespace opverify {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* const kErrorTypes[] = {"AccuracyError",
                                   "ShapeMismatch",
                                   "DTypeMismatch",
                                   "NaNMismatch",
                                   "InfMismatch",
                                   "RuntimeError",
                                   "CompilationError",
                                   "Crash",
                                   "Timeout",
                                   "OutOfMemory",
                                   "DeviceError",
                                   "ImportError",
                                   "EnvironmentError",
                                   "LintError",
                                   "HiddenStateMismatch",
                                   "ReferenceError",
                                   "SandboxViolation",
                                   "PerformanceError",
                                   "",
                                   "<b>&\"x\x01\xff"};

CaseRecord Case(const std::string& op, int index, bool passed, const std::string& error_type) {
  CaseRecord r;
  r.kind = RecordKind::kCase;
  r.op_name = op;
  r.case_id = op + "/#" + std::to_string(index + 1);
  r.case_index = index;
  r.params = nullptr;
  r.input_desc = json::array({{{"type", "tensor"}, {"dtype", "float32"}, {"shape", {4, 8}}},
                              {{"type", "list"}, {"items", {{{"dtype", "float16"}}}}}});
  r.passed = passed;
  r.route = "eco";
  r.error_type = passed ? "" : error_type;
  r.error_msg = passed ? "" : error_type + ": <script>alert(1)</script>\nsecond line \xc3\xa9";
  json metrics = {
      {"max_abs_diff", 0.5},
      {"max_rel_diff", 0.25},
      {"mere_mare", {{"MERE", 1e-5}, {"MARE", 1e-4}, {"threshold", 1.2e-4}, {"passed", passed}}}};
  if (error_type == "ShapeMismatch") metrics = nullptr;  // the judge compared nothing
  r.outputs =
      json::array({{{"passed", passed},
                    {"dtype", "float32"},
                    {"shape", {4, 8}},
                    {"route", "eco"},
                    {"standard", "eco"},
                    {"error_type", r.error_type},
                    {"metrics", metrics},
                    {"worst", json::array({{{"index", 5}, {"golden", 1}, {"actual", 2}}})}}});
  r.timings = {{"wall_ms", 5.0}, {"compile_ms", 1.5}, {"golden_ms", 2.0}, {"impl_ms", 1.0}};
  r.rank = 0;
  r.device = "cpu";
  r.ab = passed ? json(nullptr)
                : json{{"classification", "reference_suspect"},
                       {"bitwise_equal", false},
                       {"attempts", json::array({{{"cache", "fresh"}, {"passed", false}}})},
                       {"reference_trust",
                        {{"reason", "the fp64 golden agrees"},
                         {"fp64", {{"passed", true}, {"ran", true}}},
                         {"device_reference", {{"judged", false}, {"error_msg", "no device"}}}}}};
  r.extra = {{"warnings", json::array({"w"})},
             {"details",
              {{"case_idx", index + 1},
               {"passed", passed},
               {"waivers", json::array({{{"op", "aten::add"}, {"why", "x"}}})}}}};
  if (!passed) r.extra["failure"] = {{"case_idx", index + 1}, {"error_type", error_type}};
  return r;
}

CaseRecord Facts(const std::string& op) {
  CaseRecord r;
  r.kind = RecordKind::kOperator;
  r.op_name = op;
  r.case_id = op + "/@operator/0";
  r.case_index = -1;
  r.extra = {
      {"task_file", "/ops/" + op + "_torch.py"},
      {"impl_name", "cpu_impl"},
      {"case_count", 1},
      {"lint_enabled", true},
      {"non_compute", false},
      {"lint", {{"passed", true}}},
      {"left_out", {{op + "/#9", "--filter"}}},
      {"environment",
       {{"device",
         {{"name", "cpu"}, {"backend", "cpu"}, {"compute_units", 2}, {"compute_unit", "cores"}}},
        {"torch", "1.13"}}}};
  return r;
}

CaseRecord BenchItem(const std::string& op) {
  CaseRecord r;
  r.kind = RecordKind::kBenchItem;
  r.op_name = op;
  r.case_id = op + "/@bench-item/0";
  r.case_index = -1;
  r.extra = {{"settings",
              {{"warmup", 1},
               {"repeats", 3},
               {"adaptive", false},
               {"rse_target", 0.01},
               {"review_speedup", 10.0}}},
             {"environment", {{"device", "cpu"}}},
             {"clock", {{"locked", false}}},
             {"wall_s", 0.5}};
  return r;
}

CaseRecord BenchShape(const std::string& op) {
  CaseRecord r;
  r.kind = RecordKind::kBenchShape;
  r.op_name = op;
  r.case_id = op + "/#1@bench";
  r.case_index = -1;
  const json side = {
      {"measured", true}, {"latency_ms", 0.5}, {"stats", {{"n", 3}}}, {"peak_memory_mb", 1.0}};
  r.extra = {{"case_id", op + "/#1"},
             {"shape",
              {{"case_idx", 1},
               {"input_desc", json::array({{{"dtype", "float32"}}})},
               {"input_dtypes", {"float32"}},
               {"passed", true},
               {"framework", side},
               {"implementation", side},
               {"speedup", 1.5},
               {"warnings", json::array()},
               {"above_roofline", false}}}};
  return r;
}

// Every place in `value` (its JSON pointers), the whole value ("") first.
void Pointers(const json& value, const std::string& at, std::vector<std::string>* out) {
  out->push_back(at);
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      std::string token;
      for (char c : it.key()) token += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
      Pointers(it.value(), at + "/" + token, out);
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i)
      Pointers(value[i], at + "/" + std::to_string(i), out);
  }
}

json* Attribute(CaseRecord* r, const std::string& name) {
  if (name == "params") return &r->params;
  if (name == "input_desc") return &r->input_desc;
  if (name == "outputs") return &r->outputs;
  if (name == "timings") return &r->timings;
  if (name == "ab") return &r->ab;
  return &r->extra;
}

// `base` with the value at `pointer` of `attribute` replaced by `value`
// (removed when `value` is discarded).
CaseRecord Mutated(const CaseRecord& base, const std::string& attribute, const std::string& pointer,
                   const json& value) {
  CaseRecord r = base;
  json* whole = Attribute(&r, attribute);
  if (pointer.empty()) {
    *whole = value.is_discarded() ? json() : value;
    return r;
  }
  const json::json_pointer where(pointer);
  if (!value.is_discarded()) {
    (*whole)[where] = value;
    return r;
  }
  json& parent = (*whole)[where.parent_pointer()];
  if (parent.is_object()) parent.erase(where.back());
  if (parent.is_array()) parent.erase(static_cast<std::size_t>(std::stoul(where.back())));
  return r;
}

// The record renamed to operator `op` (its ids follow).
CaseRecord Renamed(CaseRecord r, const std::string& op) {
  const std::string old = r.op_name;
  r.op_name = op;
  r.case_id = op + r.case_id.substr(old.size());
  if (r.kind == RecordKind::kBenchShape && r.extra.is_object() && r.extra.contains("case_id") &&
      r.extra["case_id"].is_string()) {
    r.extra["case_id"] = op + "/#1";
  }
  return r;
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ReporterPropertyTest : public testing::ScratchDirTest {
 protected:
  // Appends `records` to a new shard of rank 0 of the run folder.
  void Store(const std::vector<CaseRecord>& records) {
    Result<std::unique_ptr<ShardWriter>> writer =
        ShardWriter::Create(dir_, 0, StorePolicy::kNone, Durability::kProcessCrash);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    for (const CaseRecord& r : records) {
      Status appended = writer.value()->Append(r);
      ASSERT_TRUE(appended.ok()) << r.case_id << ": " << appended.ToString();
    }
  }

  // Every reporter of the batch and of opverify-reduce over the stored run:
  // the model it wrote from, and the summary.
  json ReportAll(RunModel* model) {
    const json run_info = {{"manifest", "/jobs/x.json"},
                           {"manifest_name", "property"},
                           {"ranks", 1},
                           {"backend", "cpu"},
                           {"timing", {{"run_wall_s", 3.0}}}};
    Result<RunTotals> totals =
        WriteRunReports(dir_, run_info, model, [&](const RunModel&, ReportExtras* extras) {
          Result<BaselineDiff> diff = DiffRuns(dir_, dir_, 0.05);  // itself as its baseline
          EXPECT_TRUE(diff.ok()) << diff.status().ToString();
          if (diff.ok()) extras->baseline = diff.value();
        });
    EXPECT_TRUE(totals.ok()) << totals.status().ToString();
    std::FILE* sink = std::tmpfile();
    PrintFailedCases(*model, dir_, sink);
    PrintDeclaredExceptions(*model, sink);
    std::fclose(sink);
    for (const char* file : {"summary.json", "report.md", "report.html", "junit.xml"}) {
      EXPECT_TRUE(fs::is_regular_file(fs::path(dir_) / file)) << file;
    }
    for (const OperatorModel& op : model->operators) {
      for (const char* file : {"verify_result.json", "precision_report.md"}) {
        EXPECT_TRUE(fs::is_regular_file(fs::path(dir_) / "ops" / OperatorFolder(op.name) / file))
            << op.name << ": " << file;
      }
    }
    EXPECT_FALSE(fs::exists(fs::path(dir_) / "summary.json.tmp"));
    return json::parse(ReadText(fs::path(dir_) / "summary.json"));
  }
};

TEST_F(ReporterPropertyTest, EveryErrorTypeWithAndWithoutMetricsReachesEveryReport) {
  std::vector<CaseRecord> records;
  int k = 0;
  for (const char* type : kErrorTypes) {
    const std::string op = Printf("e%02d", k++);
    records.push_back(Facts(op));
    CaseRecord with_metrics = Case(op, 0, false, type);
    records.push_back(with_metrics);
    CaseRecord null_metrics = Case(op, 1, false, type);
    null_metrics.outputs[0]["metrics"] = nullptr;
    records.push_back(null_metrics);
    CaseRecord no_outputs = Case(op, 2, false, type);
    no_outputs.outputs = json::array();
    no_outputs.ab = nullptr;
    records.push_back(no_outputs);
  }
  records.push_back(Facts("fine"));
  records.push_back(Case("fine", 0, true, ""));
  records.push_back(BenchItem("fine"));
  records.push_back(BenchShape("fine"));
  ASSERT_NO_FATAL_FAILURE(Store(records));
  RunModel model;
  const json summary = ReportAll(&model);
  EXPECT_EQ(summary["problems"], json::array());
  EXPECT_EQ(summary["totals"]["failed"], 3 * static_cast<int>(std::size(kErrorTypes)));
  EXPECT_EQ(summary["totals"]["passed"], 1);
  const std::string junit = ReadText(fs::path(dir_) / "junit.xml");
  EXPECT_NE(junit.find("type=\"ShapeMismatch\""), std::string::npos);
  const std::string precision = ReadText(fs::path(dir_) / "ops" / "e01" / "precision_report.md");
  EXPECT_NE(precision.find("| ShapeMismatch |"), std::string::npos) << precision;
  EXPECT_TRUE(fs::is_regular_file(fs::path(dir_) / "ops" / "fine" / "perf_result.json"));
}

// Each record kind with each of its fields missing, null or of another type:
// one operator per variant (with a plain case beside a non-case record), all
// in one run, so that a record that took a reporter down would take the
// others' reports with it.
TEST_F(ReporterPropertyTest, EveryFieldMissingNullOrOfAnotherTypeIsReportedOrNamedAsAProblem) {
  const std::vector<CaseRecord> bases = {Case("base", 0, false, "AccuracyError"),
                                         Case("base", 0, true, ""), Facts("base"),
                                         BenchItem("base"), BenchShape("base")};
  const json values[] = {json(json::value_t::discarded),
                         json(nullptr),
                         json("text \xff"),
                         json(7),
                         json(-1.5),
                         json(true),
                         json::array({1, "x"}),
                         json::object({{"k", nullptr}})};
  std::vector<CaseRecord> records;
  std::vector<std::string> ops;
  for (const CaseRecord& base : bases) {
    for (const char* attribute : {"params", "input_desc", "outputs", "timings", "ab", "extra"}) {
      std::vector<std::string> pointers;
      CaseRecord copy = base;
      Pointers(*Attribute(&copy, attribute), "", &pointers);
      for (const std::string& pointer : pointers) {
        for (const json& value : values) {
          // The writer refuses a non-case record whose extra is no object (ShardWriterTest).
          if (base.kind != RecordKind::kCase && std::string(attribute) == "extra" &&
              pointer.empty() && !value.is_object() && !value.is_null() && !value.is_discarded())
            continue;
          const std::string op = Printf("m%05zu", ops.size());
          ops.push_back(op);
          CaseRecord mutated = Renamed(Mutated(base, attribute, pointer, value), op);
          if (mutated.kind != RecordKind::kCase) records.push_back(Case(op, 0, true, ""));
          if (mutated.kind == RecordKind::kBenchShape) records.push_back(BenchItem(op));
          if (mutated.kind == RecordKind::kBenchItem) records.push_back(BenchShape(op));
          records.push_back(std::move(mutated));
        }
      }
    }
  }
  ASSERT_GT(ops.size(), 500u);
  ASSERT_NO_FATAL_FAILURE(Store(records));
  RunModel model;
  const json summary = ReportAll(&model);
  std::set<std::string> reported;
  for (const json& op : summary["operators"]) reported.insert(op["name"].get<std::string>());
  std::string problems;
  for (const json& line : summary["problems"]) problems += line.get<std::string>() + "\n";
  for (const std::string& op : ops) {
    // Reported, or its record named as a problem (the problem names the case id).
    EXPECT_TRUE(reported.count(op) > 0 || problems.find("(" + op + "/") != std::string::npos) << op;
  }
  EXPECT_GT(reported.size(), ops.size() / 2);  // most variants are readable as they are
  EXPECT_EQ(summary["totals"]["lost"], summary["problems"].size());
}

}  // namespace
}  // namespace opverify
