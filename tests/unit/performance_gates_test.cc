// The noise floor of a speed change and the performance gates CI reads:
// three repeats' spread explains a larger change than fifty repeats' does,
// and a gate that failed is a failure in summary.json and junit.xml.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reduce/baseline_diff.h"
#include "reduce/performance_gates.h"

namespace opverify {
namespace {

using ::testing::HasSubstr;

// One shape measured in both runs: `ratio` slower now, each run with the
// relative spread `spread` over `repeats` repeats.
std::vector<std::pair<ShapeTiming, ShapeTiming>> Shapes(int shapes, double ratio, double spread,
                                                        int repeats) {
  std::vector<std::pair<ShapeTiming, ShapeTiming>> out;
  for (int i = 0; i < shapes; ++i) {
    const double before = 1.0 + i;
    out.push_back(
        {{before, before * spread, repeats}, {before * ratio, before * ratio * spread, repeats}});
  }
  return out;
}

TEST(StudentT99, WidensForFewDegreesOfFreedom) {
  EXPECT_DOUBLE_EQ(StudentT99(1), 63.657);
  EXPECT_DOUBLE_EQ(StudentT99(4), 4.604);
  EXPECT_DOUBLE_EQ(StudentT99(11), 3.169);  // between rows: the smaller dof's, wider
  EXPECT_DOUBLE_EQ(StudentT99(98), 2.660);
  EXPECT_DOUBLE_EQ(StudentT99(100000), 2.581);
}

TEST(CompareTimings, ThreeRepeatsOfCpuNoiseAreNoRegressionFiftyAre) {
  // 20% slower with a 5% spread in each run.
  const std::optional<SpeedChange> few = CompareTimings("op", Shapes(3, 1.2, 0.05, 3));
  ASSERT_TRUE(few.has_value());
  EXPECT_NEAR(few->ratio, 1.2, 1e-12);
  EXPECT_EQ(few->shapes, 3);
  EXPECT_EQ(few->repeats, 3);
  // hypot(5%, 5%) = 7.07%, times t(99%, 4 dof) = 4.604: a 32.6% floor.
  EXPECT_NEAR(few->noise_floor, std::hypot(0.05, 0.05) * 4.604, 1e-12);
  EXPECT_FALSE(BeyondNoise(*few, 0.05));
  const std::optional<SpeedChange> many = CompareTimings("op", Shapes(3, 1.2, 0.05, 50));
  EXPECT_NEAR(many->noise_floor, std::hypot(0.05, 0.05) * 2.660, 1e-12);  // 98 dof
  EXPECT_TRUE(BeyondNoise(*many, 0.05));
  // Past the floor but within the threshold: not counted either.
  const std::optional<SpeedChange> small = CompareTimings("op", Shapes(2, 1.04, 0.001, 50));
  EXPECT_FALSE(BeyondNoise(*small, 0.05));
  EXPECT_TRUE(BeyondNoise(*small, 0.01));
  // The fewest repeats of any shape set the floor; a faster change counts the same way.
  auto mixed = Shapes(2, 1 / 1.5, 0.02, 50);
  mixed[1].second.repeats = 2;
  const std::optional<SpeedChange> faster = CompareTimings("op", mixed);
  EXPECT_EQ(faster->repeats, 2);
  EXPECT_NEAR(faster->noise_floor, std::hypot(0.02, 0.02) * 9.925, 1e-12);
  EXPECT_TRUE(BeyondNoise(*faster, 0.05));
  EXPECT_FALSE(CompareTimings("op", {}).has_value());
}

TEST(PerformanceGates, ViolatedReferencesAndRegressionsAreFailures) {
  ReportExtras extras;
  ReferenceCheck check;
  ReferenceResult violated;
  violated.op = "relu";
  violated.target = "relu";
  violated.reference_ms = 1;
  violated.measured_ms = 2;
  violated.violated = true;
  violated.message = "PerformanceError: relu ...";
  ReferenceResult met = violated;
  met.target = "relu/#1";
  met.violated = false;
  met.message.clear();
  ReferenceResult unmeasured;
  unmeasured.op = "gelu";
  unmeasured.target = "gelu";
  check.results = {violated, met, unmeasured};
  extras.references = check;
  BaselineDiff diff;
  diff.slower = {{"softmax", 1.5, 0.02, 4, 50, 0.05}};
  diff.faster = {{"add", 0.5, 0.02, 4, 50, 0.05}};
  extras.baseline = diff;
  const std::vector<PerformanceGate> gates = PerformanceGates(extras);
  ASSERT_EQ(gates.size(), 5u);
  EXPECT_EQ(gates[0].type, "PerformanceError");
  EXPECT_EQ(gates[1].type, "");
  EXPECT_THAT(gates[1].message, HasSubstr("2 ms against the reference 1 ms"));
  EXPECT_FALSE(gates[2].measured);
  EXPECT_EQ(gates[3].type, "PerformanceRegression");
  EXPECT_THAT(gates[3].message,
              HasSubstr("softmax +50.0% against the baseline (geometric mean over 4 shapes; "
                        "noise floor 5.0%: spread 2.0% at 50 repeats)"));
  EXPECT_EQ(gates[4].type, "");
  const nlohmann::ordered_json json = PerformanceGatesJson(extras);
  EXPECT_EQ(json["failed"], 2);
  EXPECT_EQ(json["regressions"].size(), 1u);
  EXPECT_EQ(json["regressions"][0]["op"], "softmax");
  EXPECT_EQ(json["reference_violations"][0]["error_type"], "PerformanceError");
  EXPECT_EQ(json["gates"].size(), 5u);
}

}  // namespace
}  // namespace opverify
