// Cases: a sweep expands to the cartesian product in a fixed order, and every
// case (swept, the task's own, generated edge case) has an id that does not
// depend on how its parameters were written.
#include "runner/cases/cases.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace opverify {
namespace {

using nlohmann::json;

TEST(Sweep, ProductSizeIsTheProductOfTheListLengths) {
  const json sweep =
      json::parse(R"({"a": [1, 2, 3], "b": ["x", "y"], "c": [true, false, null, 0.25]})");
  const std::vector<json> cases = ExpandSweep(sweep);
  EXPECT_EQ(cases.size(), 24u);
  EXPECT_EQ(cases[0], json::parse(R"({"a": 1, "b": "x", "c": true})"));
  EXPECT_EQ(cases[23], json::parse(R"({"a": 3, "b": "y", "c": 0.25})"));
  EXPECT_EQ(ExpandSweep(json::parse(R"({"n": [7]})")),
            std::vector<json>{json::parse(R"({"n": 7})")});
}

TEST(Sweep, SizeIsCountedWithoutExpandingAndSaturates) {
  EXPECT_EQ(SweepSize(json::parse(
                R"({"a": [1, 2, 3], "b": ["x", "y"], "c": [true, false, null, 0.25]})")),
            24u);
  json huge = json::object();
  for (int i = 0; i < 70; ++i) huge["k" + std::to_string(i)] = json::array({0, 1});
  EXPECT_EQ(SweepSize(huge), UINT64_MAX);  // 2^70: saturated, not wrapped to 0
}

TEST(Sweep, KeysInSortedOrderTheLastVaryingFastest) {
  // Written "rows" first: the order of the cases follows the sorted keys.
  const std::vector<json> cases =
      ExpandSweep(json::parse(R"({"rows": [1, 2], "dtype": ["float16", "float32"]})"));
  EXPECT_THAT(cases, ::testing::ElementsAre(json::parse(R"({"dtype": "float16", "rows": 1})"),
                                            json::parse(R"({"dtype": "float16", "rows": 2})"),
                                            json::parse(R"({"dtype": "float32", "rows": 1})"),
                                            json::parse(R"({"dtype": "float32", "rows": 2})")));
}

TEST(CaseId, IsStableAndCanonical) {
  // Key order in the source text does not matter: nlohmann sorts keys.
  const json a = json::parse(R"({"rows": 128, "dtype": "float16", "cols": 1000})");
  const json b = json::parse(R"({"cols": 1000, "rows": 128, "dtype": "float16"})");
  EXPECT_EQ(CaseId("softmax", a, 0), R"(softmax/{"cols":1000,"dtype":"float16","rows":128})");
  EXPECT_EQ(CaseId("softmax", a, 0), CaseId("softmax", b, 5));
  EXPECT_EQ(CaseId("softmax", nullptr, 3), "softmax/#4");
  // An int and a float are different arguments to get_inputs, so different cases.
  EXPECT_NE(CaseId("op", json::parse(R"({"n": 1})"), 0),
            CaseId("op", json::parse(R"({"n": 1.0})"), 0));
}

TEST(EdgeCaseId, IsTheLabelUnderEdgeAndNeverACaseIdOfTheSameOperator) {
  EXPECT_EQ(EdgeCaseId("softmax", "rows=1023"), "softmax/edge/rows=1023");
  EXPECT_EQ(EdgeCaseId("softmax", "nan_inf"), "softmax/edge/nan_inf");
  EXPECT_NE(EdgeCaseId("softmax", "#0"), CaseId("softmax", nullptr, 0));
}

}  // namespace
}  // namespace opverify
