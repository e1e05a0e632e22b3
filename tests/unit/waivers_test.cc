// Declared exceptions at work (runner/results/waivers.h): waivers merged per
// declaration, and each declared allowance used, stale or unchecked.
#include "runner/results/waivers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace opverify {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

json Waiver(const std::string& declared_at, const json& found) {
  return {{"op", "aten::sort"},
          {"why", "by design"},
          {"declared_at", declared_at},
          {"found", found},
          {"found_count", found.size()}};
}

TEST(MergeWaivers, OneEntryPerDeclarationWithEveryFindingCounted) {
  json merged = json::array();
  MergeWaivers(&merged,
               json::array({Waiver(
                   "m:/a/0", json::array({{{"name", "torch.sort"}, {"source", "static"}}}))}));
  MergeWaivers(
      &merged,
      json::array({Waiver("m:/a/0", json::array({{{"name", "aten::sort"}, {"source", "runtime"}}})),
                   Waiver("m:/b/0", json::array())}));
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0]["found"].size(), 2u);
  EXPECT_EQ(merged[0]["found_count"], 2);
  MergeWaivers(&merged, json("not a list"));  // a damaged record changes nothing
  EXPECT_EQ(merged.size(), 2u);
}

TEST(MergeWaivers, KeepsAFewFindingsAndCountsTheRest) {
  json many = json::array();
  for (int i = 0; i < 20; ++i)
    many.push_back({{"name", "torch.sort"}, {"file", "f.py"}, {"line", i}, {"source", "static"}});
  json merged = json::array({Waiver("m:/a/0", json::array())});
  MergeWaivers(&merged, json::array({Waiver("m:/a/0", many)}));
  EXPECT_EQ(merged[0]["found"].size(), kMaxWaiverFindings);
  EXPECT_EQ(merged[0]["found_count"], 20);
  EXPECT_THAT(FindingsText(merged[0]), HasSubstr("f.py:0 (static), f.py:1 (static)"));
  EXPECT_THAT(FindingsText(merged[0]), HasSubstr(" and 12 more"));
}

TEST(AllowanceUses, AnAllowanceDeclaredOnceIsOneEntryOverItsOperators) {
  const json library = {{"op", "torch.sort"},
                        {"why", "by design"},
                        {"library", "lib"},
                        {"declared_at", "m:/libraries/lib/0"}};
  const json own = {
      {"op", "aten::topk"}, {"why", "old path"}, {"declared_at", "m:/operators/1/allow_torch/0"}};
  const json unchecked = {
      {"op", "aten::mm"}, {"why", "logits"}, {"declared_at", "m:/operators/2/allow_torch/0"}};
  std::vector<OperatorAllowances> ops = {
      {"a",
       json::array({library}),
       true,
       {json::array({Waiver("m:/libraries/lib/0", json::array())}), json::array()}},
      {"b", json::array({own, library}), true, {json::array()}},
      {"c", json::array({unchecked}), false, {json::array()}}};
  const std::vector<AllowanceUse> uses = AllowanceUses(ops);
  ASSERT_EQ(uses.size(), 3u);
  EXPECT_THAT(uses[0].operators, ElementsAre("a", "b"));
  EXPECT_EQ(uses[0].cases, 1);
  EXPECT_EQ(uses[0].State(), "used");
  EXPECT_EQ(uses[1].State(), "stale");
  EXPECT_EQ(uses[2].State(), "unchecked");  // neither the lint nor the runtime evidence ran there
  EXPECT_EQ(StaleAllowanceLine(uses[1]),
            "allowance aten::topk (m:/operators/1/allow_torch/0) was not needed by any case of b: "
            "stale; remove it");
  const nlohmann::ordered_json shown = AllowanceUseJson(uses[0]);
  EXPECT_EQ(shown["library"], "lib");
  EXPECT_EQ(shown["state"], "used");
  EXPECT_EQ(shown["cases"], 1);
}

TEST(AllowanceUses, DamagedRecordsAreNoAllowances) {
  std::vector<OperatorAllowances> ops = {{"a", json("x"), true, {json(3)}},
                                         {"b", json::array({json(1)}), true, {}}};
  const std::vector<AllowanceUse> uses = AllowanceUses(ops);
  ASSERT_EQ(uses.size(), 1u);  // the number: an allowance without fields, never a crash
  EXPECT_EQ(uses[0].State(), "stale");
}

}  // namespace
}  // namespace opverify
