// The benchmark loop against a scripted executor: what is measured, how the
// speedup and the roofline come out, and how a failing shape is contained.
#include "runner/bench/operator_bench.h"

#include <gtest/gtest.h>

#include <csignal>

#include "tests/support/fake_executor.h"

namespace opverify {
namespace {

using nlohmann::json;
using testing::FakeExecutor;
using testing::FakeExecutorScript;
using testing::FakeReply;
namespace proto = executor_protocol;

// Framework 2 ms, implementation 0.5 ms per shape.
void Measurable(FakeExecutorScript* script, int case_count) {
  script->On("load", [case_count](const json&, const FakeExecutor&) {
    proto::LoadReply load;
    load.case_count = case_count;
    return FakeReply::Ok(json(load));
  });
  script->On("environment", [](const json&, const FakeExecutor&) {
    return FakeReply::Ok({{"environment", {{"device", {{"backend", "cpu"}}}}}});
  });
  script->On("bench_prepare", [](const json& request, const FakeExecutor&) {
    proto::BenchPrepareReply reply;
    reply.input_desc = json::array({{{"case", request.at("index")}}});
    reply.input_dtypes = {"float16"};
    return FakeReply::Ok(json(reply));
  });
  script->On("bench_measure", [](const json& request, const FakeExecutor&) {
    proto::BenchMeasureReply reply;
    reply.side = request.at("side").get<std::string>();
    reply.stats = {{"median_ms", reply.side == "framework" ? 2.0 : 0.5}, {"repeats", request.at("repeats")}};
    reply.peak_memory_mb = 12.5;
    reply.operators = {{reply.side + "_kernel", 0.25}};
    return FakeReply::Ok(json(reply));
  });
  script->On("bench_release", [](const json&, const FakeExecutor&) { return FakeReply::Ok(); });
}

OperatorSpec Spec() {
  OperatorSpec spec;
  spec.name = "gelu";
  spec.code.task_file = "/ops/gelu_torch.py";
  spec.code.impl_file = "/ops/gelu_impl.py";
  return spec;
}

RunOptions Options(FakeExecutorScript* script) {
  RunOptions options;
  options.start_executor = script->Factory();
  return options;
}

TEST(BenchOperator, MeasuresBothSidesOfEveryShapeAndTheirSpeedup) {
  FakeExecutorScript script;
  Measurable(&script, 2);
  BenchConfig settings;
  settings.timing.repeats = 7;
  const OperatorBenchResult result = BenchOperator(Spec(), Options(&script), settings);
  ASSERT_EQ(result.shapes.size(), 2U);
  for (const ShapeResult& shape : result.shapes) {
    EXPECT_TRUE(shape.passed);
    EXPECT_EQ(shape.framework.latency_ms, 2.0);
    EXPECT_EQ(shape.implementation.latency_ms, 0.5);
    EXPECT_EQ(shape.speedup, 4.0);
    EXPECT_EQ(shape.implementation.peak_memory_mb, 12.5);
    EXPECT_EQ(shape.implementation.operators, json({{"implementation_kernel", 0.25}}));
    EXPECT_EQ(shape.input_dtypes, std::vector<std::string>{"float16"});
  }
  EXPECT_EQ(result.shapes[1].case_idx, 2);
  EXPECT_EQ(result.shapes[1].input_desc.at(0).at("case"), 1);
  const auto measures = script.RequestsOf("bench_measure");
  ASSERT_EQ(measures.size(), 4U);
  EXPECT_EQ(measures[0].request.at("side"), "framework");
  EXPECT_EQ(measures[1].request.at("side"), "implementation");
  EXPECT_EQ(measures[1].request.at("repeats"), 7);
  EXPECT_EQ(script.RequestsOf("bench_release").size(), 2U);
  EXPECT_EQ(script.started(), 1);
}

TEST(BenchOperator, AGivenFrameworkLatencyIsNotMeasured) {
  FakeExecutorScript script;
  Measurable(&script, 1);
  BenchConfig settings;
  settings.skip_framework = true;
  settings.framework_latency_ms = 1.0;
  const OperatorBenchResult result = BenchOperator(Spec(), Options(&script), settings);
  ASSERT_EQ(result.shapes.size(), 1U);
  EXPECT_EQ(result.shapes[0].speedup, 2.0);
  EXPECT_FALSE(result.shapes[0].framework.measured);
  ASSERT_EQ(script.RequestsOf("bench_measure").size(), 1U);
  EXPECT_TRUE(script.RequestsOf("bench_prepare").at(0).request.at("skip_framework").get<bool>());
}

TEST(BenchOperator, ACrashWhileTimingFailsTheShapeAndTheNextRunsInANewExecutor) {
  FakeExecutorScript script;
  Measurable(&script, 2);
  script.On("bench_measure", [](const json& request, const FakeExecutor& executor) {
    if (executor.id() == 1 && request.at("side") == "implementation") return FakeReply::Died(SIGBUS);
    proto::BenchMeasureReply reply;
    reply.stats = {{"median_ms", 1.0}};
    return FakeReply::Ok(json(reply));
  });
  const OperatorBenchResult result = BenchOperator(Spec(), Options(&script), BenchConfig{});
  ASSERT_EQ(result.shapes.size(), 2U);
  EXPECT_FALSE(result.shapes[0].passed);
  EXPECT_EQ(result.shapes[0].error_type, "Crash");
  EXPECT_EQ(result.shapes[0].error_msg.rfind("timing implementation: ", 0), 0U) << result.shapes[0].error_msg;
  EXPECT_TRUE(result.shapes[1].passed);
  EXPECT_EQ(script.started(), 2);
  // Nothing is released in the executor that died.
  ASSERT_EQ(script.RequestsOf("bench_release").size(), 1U);
  EXPECT_EQ(script.RequestsOf("bench_release")[0].executor, 2);
}

TEST(BenchOperator, AnOperatorThatDoesNotLoadFailsEveryShape) {
  FakeExecutorScript script;
  Measurable(&script, 3);
  script.On("load", [](const json&, const FakeExecutor&) {
    return FakeReply::Error("ImportError", "cannot import ModelNew", false, {{"case_count", 3}});
  });
  const OperatorBenchResult result = BenchOperator(Spec(), Options(&script), BenchConfig{});
  ASSERT_EQ(result.shapes.size(), 3U);
  for (const ShapeResult& shape : result.shapes) {
    EXPECT_EQ(shape.error_type, "ImportError");
    EXPECT_EQ(shape.error_msg, "load: cannot import ModelNew");
  }
  EXPECT_TRUE(script.RequestsOf("bench_prepare").empty());
}

TEST(BenchOperator, AnImplementationFasterThanTheMemoryRooflineIsFlagged) {
  FakeExecutorScript script;
  Measurable(&script, 1);
  script.On("bench_prepare", [](const json&, const FakeExecutor&) {
    proto::BenchPrepareReply reply;
    reply.bytes_moved = 1e9;            // 1 GB at 1000 GB/s: at least 1 ms
    reply.memory_bandwidth_gbs = 1000;
    return FakeReply::Ok(json(reply));
  });
  const OperatorBenchResult result = BenchOperator(Spec(), Options(&script), BenchConfig{});
  ASSERT_EQ(result.shapes.size(), 1U);
  EXPECT_DOUBLE_EQ(result.shapes[0].roofline_ms.value_or(0), 1.0);
  EXPECT_TRUE(result.shapes[0].above_roofline);
}

TEST(BenchOperator, SkippedShapesAreNotBenchmarked) {
  FakeExecutorScript script;
  Measurable(&script, 3);
  OperatorSpec spec = Spec();
  spec.skip_case = [](int index, const std::string&) { return index != 2; };
  const OperatorBenchResult result = BenchOperator(spec, Options(&script), BenchConfig{});
  ASSERT_EQ(result.shapes.size(), 1U);
  EXPECT_EQ(result.shapes[0].case_idx, 3);
}

}  // namespace
}  // namespace opverify
