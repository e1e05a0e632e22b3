// The types of a stored record's JSON columns (runner/store/record_facts.h),
// summary.json's run info (run_info.h), the benchmark records
// (runner/results/bench_result.h) and opverify's failure types
// (runner/common/failure_type.h): the JSON on disk stays what it was, and
// what a reader cannot place keeps its default or its text.
#include "runner/store/record_facts.h"

#include <gtest/gtest.h>

#include <cmath>

#include "runner/common/failure_type.h"
#include "runner/results/bench_result.h"
#include "runner/store/run_info.h"

namespace opverify {
namespace {

using nlohmann::json;

TEST(FailureType, EveryKindIsStoredAsItsNameAndReadBack) {
  for (int k = static_cast<int>(FailureKind::kAccuracyError);
       k < static_cast<int>(FailureKind::kOther); ++k) {
    const FailureKind kind = static_cast<FailureKind>(k);
    const FailureType type(kind);
    ASSERT_FALSE(type.text().empty()) << k;
    EXPECT_EQ(FailureType::FromText(type.text()).kind(), kind) << type.text();
  }
  EXPECT_EQ(FailureType(FailureKind::kCrash).text(), "Crash");
  EXPECT_EQ(FailureType(FailureKind::kAccuracyError).text(), "AccuracyError");
  EXPECT_EQ(FailureType::FromText("Timeout"), FailureKind::kTimeout);
}

TEST(FailureType, TextNoKindHasIsKeptAsRead) {
  const FailureType older = FailureType::FromText("SomeOlderError");
  EXPECT_EQ(older.kind(), FailureKind::kOther);
  EXPECT_EQ(older.text(), "SomeOlderError");
  EXPECT_EQ(FailureType::FromText("crash").kind(), FailureKind::kOther);  // names are exact
  EXPECT_EQ(FailureType::FromText("").kind(), FailureKind::kNone);
  EXPECT_EQ(FailureType().text(), "");
}

TEST(FailureType, OnlyACaseThatCouldNotRunIsNotJudged) {
  for (const char* text : {"Crash", "Timeout", "ImportError", "DeviceError", "EnvironmentError",
                           "ReferenceError"})
    EXPECT_TRUE(FailureType::FromText(text).CouldNotJudge()) << text;
  for (const char* text : {"AccuracyError", "ShapeMismatch", "RuntimeError", "Other", ""})
    EXPECT_FALSE(FailureType::FromText(text).CouldNotJudge()) << text;
}

// The operator record as runner/batch/item_records.cc wrote it before it
// wrote it from OperatorFacts.
json WrittenOperatorRecord() {
  return {{"environment", {{"device", {{"name", "cpu"}}}}},
          {"lint", {{"ok", true}}},
          {"non_compute", false},
          {"non_compute_given", true},
          {"case_count", 4},
          {"impl_name", "cpu_impl"},
          {"task_file", "/jobs/add/add_torch.py"},
          {"lint_enabled", true},
          {"allow_torch", json::array()},
          {"allow_torch_checked", true},
          {"startup", {{"attempts", 1}}},
          {"left_out", {{"add/#3", "--filter"}}}};
}

TEST(OperatorFacts, WritesTheRecordItReads) {
  const json written = WrittenOperatorRecord();
  const OperatorFacts facts = written.get<OperatorFacts>();
  EXPECT_EQ(facts.case_count, 4);
  EXPECT_EQ(facts.impl_name, "cpu_impl");
  EXPECT_EQ(facts.non_compute_given, true);
  EXPECT_EQ(facts.left_out.at("add/#3"), "--filter");
  EXPECT_EQ(json(facts), written);
  json without_left_out = written;
  without_left_out.erase("left_out");
  EXPECT_EQ(json(without_left_out.get<OperatorFacts>()), without_left_out);
}

TEST(OperatorFacts, AnOlderRecordKeepsTheDefaults) {
  const OperatorFacts facts = json{{"task_file", "/t.py"}}.get<OperatorFacts>();
  EXPECT_FALSE(facts.case_count.has_value());
  EXPECT_FALSE(facts.impl_name.has_value());
  EXPECT_TRUE(facts.lint_enabled);
  EXPECT_TRUE(facts.environment.is_null());
  EXPECT_TRUE(facts.left_out.empty());
}

CaseRecord FailedCase() {
  CaseRecord c;
  c.error_type = "AccuracyError";
  c.timings = {{"wall_ms", 12.5}, {"judge_ms", 1.5}, {"ab_ms", 3.0}};
  c.ab = {{"classification", nullptr},
          {"attempts", json::array({{{"label", "fresh_cache"}}})},
          {"reference_trust",
           {{"reason", "the float64 golden agrees"},
            {"fp64", {{"judged", true}, {"passed", true}, {"source", "a rerun"}}},
            {"device_reference", {{"ran", false}, {"why", "no device"}}}}}};
  c.outputs =
      json::array({{{"passed", false},
                    {"route", "eco"},
                    {"dtype", "float16"},
                    {"error_type", "AccuracyError"},
                    {"shape", {2, 3}},
                    {"metrics",
                     {{"max_rel_diff", 0.5},
                      {"eco", {{"matched_ratio", 0.5}, {"over_count", 3}}},
                      {"mere_mare", {{"MERE", "NaN"}, {"MARE", 1e-3}, {"threshold", 9.77e-4}}}}}},
                   {{"passed", false}, {"route", nullptr}, {"metrics", nullptr}}});
  c.extra = {{"details", {{"waivers", json::array({{{"op", "aten::add"}}})}}}};
  return c;
}

TEST(CaseContent, ACaseIsReadOnce) {
  const CaseContent content = ReadCaseContent(FailedCase());
  EXPECT_EQ(content.error_type, FailureKind::kAccuracyError);
  EXPECT_DOUBLE_EQ(content.timings.wall_ms, 12.5);
  EXPECT_DOUBLE_EQ(content.timings.judge_ms, 1.5);
  EXPECT_DOUBLE_EQ(content.timings.golden_ms, 0);
  ASSERT_TRUE(content.ab.has_value());
  EXPECT_FALSE(content.ab->classification.has_value());
  EXPECT_TRUE(content.ab->ClassificationJson().is_null());
  EXPECT_EQ(content.ab->attempts.size(), 1u);
  ASSERT_TRUE(content.ab->reference_trust.has_value());
  const ReferenceTrust& trust = *content.ab->reference_trust;
  EXPECT_EQ(trust.reason, "the float64 golden agrees");
  ASSERT_TRUE(trust.fp64.has_value());
  EXPECT_TRUE(trust.fp64->passed);
  ASSERT_TRUE(trust.device_reference.has_value());
  EXPECT_EQ(trust.device_reference->ran, false);
  EXPECT_EQ(trust.device_reference->why, "no device");
  EXPECT_EQ(trust.stored["fp64"]["source"], "a rerun");  // the whole record, for the copies
  ASSERT_EQ(content.outputs.size(), 2u);
  const OutputVerdict& first = content.outputs[0];
  EXPECT_EQ(first.route, "eco");
  EXPECT_EQ(first.shape, (std::vector<std::int64_t>{2, 3}));
  ASSERT_TRUE(first.metrics.has_value());
  EXPECT_EQ(first.metrics->max_rel_diff, 0.5);
  ASSERT_TRUE(first.metrics->mere_mare.has_value());
  EXPECT_FALSE(first.metrics->mere_mare->mere.is_number);  // "NaN": a number, not written as one
  EXPECT_TRUE(std::isnan(first.metrics->mere_mare->mere.value));
  EXPECT_TRUE(first.metrics->mere_mare->mare.is_number);
  EXPECT_FALSE(first.metrics->npu_benchmark.has_value());
  EXPECT_FALSE(content.outputs[1].route.has_value());
  EXPECT_FALSE(content.outputs[1].metrics.has_value());
  EXPECT_EQ(content.waivers, json::array({{{"op", "aten::add"}}}));
}

TEST(CaseContent, APassedCaseHasNoneOfAFailuresParts) {
  CaseRecord c;
  c.passed = true;
  const CaseContent content = ReadCaseContent(c);
  EXPECT_EQ(content.error_type, FailureKind::kNone);
  EXPECT_FALSE(content.ab.has_value());
  EXPECT_TRUE(content.outputs.empty());
  EXPECT_EQ(content.waivers, json::array());
}

TEST(RunInfo, ReadsWhatTheBatchWroteAndSkipsWhatItCannotPlace) {
  const RunInfo info = json{
      {"manifest", "/jobs/smoke.json"},
      {"ranks", 2},
      {"timing", {{"run_wall_s", 3.5}, {"store_s", 0.25}}},
      {"stopped_by_maxfail", {{"max_failures", 5}}},
      {"unassigned_items", 7},
      {"opverify", {{"version", "0.1.0"}}},
      {"backend", 3},
      {"reduced_with",
       "garbled"}}.get<RunInfo>();
  EXPECT_EQ(info.manifest, "/jobs/smoke.json");
  EXPECT_EQ(info.ranks, 2);
  ASSERT_TRUE(info.timing.has_value());
  EXPECT_EQ(info.timing->run_wall_s, 3.5);
  EXPECT_DOUBLE_EQ(info.timing->store_s, 0.25);
  EXPECT_FALSE(info.timing->item_s.has_value());
  EXPECT_EQ(info.stopped_by_maxfail, 5);
  EXPECT_FALSE(info.stopped_by_signal.has_value());
  EXPECT_EQ(info.unassigned_items, 7);
  ASSERT_TRUE(info.opverify.has_value());
  EXPECT_EQ(info.opverify->version, "0.1.0");
  EXPECT_FALSE(info.opverify->commit.has_value());
  EXPECT_FALSE(info.backend.has_value());       // not text
  EXPECT_FALSE(info.reduced_with.has_value());  // not an object
}

TEST(BenchFacts, TheRecordsRoundTrip) {
  BenchItemFacts item;
  item.settings.timing.repeats = 7;
  item.clock = {{"locked", false}};
  item.wall_s = 1.5;
  item.shapes = 2;
  const json written = item;
  EXPECT_EQ(written.at("settings"), item.settings.ToJson());
  EXPECT_EQ(written.at("shapes"), 2);
  const BenchItemFacts read = written.get<BenchItemFacts>();
  EXPECT_EQ(read.settings.timing.repeats, 7);
  EXPECT_EQ(read.clock, item.clock);
  EXPECT_DOUBLE_EQ(read.wall_s, 1.5);

  BenchShapeFacts shape;
  shape.case_id = "add/#0";
  shape.shape.case_idx = 1;
  shape.shape.passed = true;
  const json stored = shape;
  EXPECT_EQ(stored, (json{{"case_id", "add/#0"}, {"shape", ShapeResultToJson(shape.shape)}}));
  EXPECT_EQ(stored.get<BenchShapeFacts>().shape.case_idx, 1);
}

}  // namespace
}  // namespace opverify
