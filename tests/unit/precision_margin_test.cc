// report.html's "least precise": each output measured against its own
// route's thresholds (verdicts from the real judge), and operators ranked
// within a route, never across routes.
#include "reduce/precision_margin.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runner/judge/judge.h"
#include "runner/judge/verdict_json.h"
#include "tests/support/tensor_builder.h"

namespace opverify {
namespace {

using nlohmann::json;
using testing::OwnedTensor;

json Verdict(DType dtype, const std::vector<double>& golden, const std::vector<double>& actual,
             Standard standard = Standard::kEco, InputType input = InputType::kFloat) {
  JudgeOptions options;
  options.standard = standard;
  options.input_type = input;
  return VerdictToJson(Judge(OwnedTensor(dtype, golden), OwnedTensor(dtype, actual), options));
}

// The verdict as a stored record's output is read back.
OutputVerdict Output(DType dtype, const std::vector<double>& golden,
                     const std::vector<double>& actual, Standard standard = Standard::kEco,
                     InputType input = InputType::kFloat) {
  return Verdict(dtype, golden, actual, standard, input).get<OutputVerdict>();
}

std::vector<double> Ones(std::size_t n) { return std::vector<double>(n, 1.0); }

TEST(PrecisionMargin, EcoIsTheMismatchedShareOfTheOnePercentAllowed) {
  std::vector<double> actual = Ones(1000);
  for (int i = 0; i < 5; ++i) actual[i] = 1.0 + 4e-3;  // outside 2^-10 + 2^-16: 0.5% of elements
  const std::optional<OutputMargin> m = MarginOf(Output(DType::kFloat32, Ones(1000), actual));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->route, "eco");
  EXPECT_NEAR(m->ratio, 0.5, 1e-9);
  EXPECT_TRUE(m->passed);
  EXPECT_NE(m->check.find("mismatched share"), std::string::npos) << m->check;
}

// One element over the hard limit fails the output whatever the share: it
// counts as the threshold itself, and the message says how many.
TEST(PrecisionMargin, AnElementOverTheHardLimitIsAtTheThreshold) {
  std::vector<double> actual = Ones(1000);
  actual[7] = 1.5;  // |diff| 0.5 > max(1e-2, 32 ULP, atol + rtol): 0.1% mismatched
  const std::optional<OutputMargin> m = MarginOf(Output(DType::kFloat32, Ones(1000), actual));
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(m->ratio, 1.0);
  EXPECT_FALSE(m->passed);
  EXPECT_EQ(m->check, "1 elements over the hard limit");
}

TEST(PrecisionMargin, MereMareIsTheCloserOfMereAndMare) {
  std::vector<double> actual = Ones(100);
  actual[0] = 1.0 + 20 * 0x1p-10;  // MARE 20 T: over 10 T, so failed
  const std::optional<OutputMargin> m =
      MarginOf(Output(DType::kFloat16, Ones(100), actual, Standard::kMereMare));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->route, "mere_mare");
  EXPECT_NEAR(m->ratio, 2.0, 0.01);
  EXPECT_FALSE(m->passed);
  EXPECT_EQ(m->check.rfind("MARE", 0), 0U) << m->check;
}

TEST(PrecisionMargin, QuantIsTheLargestDifferenceOfTheOneAllowed) {
  const std::optional<OutputMargin> m =
      MarginOf(Output(DType::kInt8, {1, 2, 3}, {1, 3, 3}, Standard::kEco, InputType::kFloat));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->route, "quant");
  EXPECT_DOUBLE_EQ(m->ratio, 1.0);
  EXPECT_TRUE(m->passed);
}

TEST(PrecisionMargin, ExactAndShapeMismatchHaveNothingToRank) {
  EXPECT_FALSE(MarginOf(Output(DType::kInt32, {1, 2}, {1, 2}, Standard::kEco, InputType::kInt)));
  EXPECT_FALSE(MarginOf(json{{"route", "eco"}, {"metrics", nullptr}}.get<OutputVerdict>()));
  EXPECT_FALSE(MarginOf(json("garbage").get<OutputVerdict>()));
}

CaseRecord Case(const std::string& op, json verdict) {
  CaseRecord c;
  c.case_id = op + "/#1";
  c.op_name = op;
  c.outputs = json::array({std::move(verdict)});
  return c;
}

// A quant output one step off (ratio 1, passing) and an eco output far over
// (failing) are each ranked among their own route's outputs only.
TEST(PrecisionMargin, OperatorsAreRankedWithinTheirRoute) {
  std::vector<double> close = Ones(1000), far = Ones(1000);
  for (int i = 0; i < 9; ++i) close[i] = 1.004;
  for (int i = 0; i < 50; ++i) far[i] = 1.004;
  RunModel run;
  for (const auto& [name, verdict] : std::vector<std::pair<std::string, json>>{
           {"quant_op", Verdict(DType::kInt8, {1, 2}, {2, 2})},
           {"eco_close", Verdict(DType::kFloat32, Ones(1000), close)},
           {"eco_exact", Verdict(DType::kFloat32, Ones(1000), Ones(1000))},
           {"eco_far", Verdict(DType::kFloat32, Ones(1000), far)}}) {
    OperatorModel op;
    op.name = name;
    op.cases.emplace_back(Case(name, verdict));
    run.operators.push_back(std::move(op));
  }
  const std::vector<LeastPreciseRow> rows = LeastPrecise(run, 10);
  std::vector<std::string> order;
  for (const LeastPreciseRow& row : rows) order.push_back(row.margin.route + ":" + row.op);
  EXPECT_EQ(order, (std::vector<std::string>{"eco:eco_far", "eco:eco_close", "eco:eco_exact",
                                             "quant:quant_op"}));
  EXPECT_NEAR(rows[0].margin.ratio, 5.0, 1e-9);
  EXPECT_FALSE(rows[0].margin.passed);
  EXPECT_EQ(LeastPrecise(run, 1).size(), 2U);  // the closest of each route
  const std::string html = LeastPreciseHtml(run);
  EXPECT_NE(
      html.find("<tr data-route=\"quant\"><td>quant</td><td>quant_op</td><td>quant_op/#1</td>"),
      std::string::npos)
      << html;
}

}  // namespace
}  // namespace opverify
