// The manifest and the command lines fill the same OperatorConfig and
// BenchConfig: the same setting, given either way, gives the same struct.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "runner/cli/bench_command.h"
#include "runner/cli/verify_command.h"
#include "runner/config/bench_config.h"
#include "runner/config/operator_config.h"

namespace opverify {
namespace {

using nlohmann::json;

auto Tie(const OperatorConfig& c) {
  return std::tie(c.non_compute, c.standard, c.precision_mode, c.timeout_s, c.warmup_timeout_s,
                  c.lint, c.runtime_checks, c.ghost_replay, c.probe, c.probe_determinism, c.repeat,
                  c.seed, c.seeds, c.golden_precision, c.edge_cases);
}

auto Tie(const BenchConfig& c) {
  const MeasureSettings& t = c.timing;
  return std::tie(c.enabled, c.warmup, t.repeats, t.adaptive, t.max_repeats, t.rse_target,
                  t.max_seconds, c.flush_l2, t.profile_iterations, c.skip_framework,
                  c.framework_latency_ms, c.review_speedup);
}

OperatorConfig FromVerifyFlags(const std::string& flags) {
  CLI::App app;
  VerifyArgs args;
  AddVerifyCommand(app, &args);
  app.parse("verify --op_name x " + flags, false);
  return args.config;
}

BenchArgs FromBenchFlags(const std::string& flags) {
  CLI::App app;
  BenchArgs args;
  AddBenchCommand(app, &args);
  app.parse("bench --op_name x " + flags, false);
  return args;
}

OperatorConfig FromManifest(const json& fields) {
  OperatorConfig config;
  const Status applied = ApplyManifestFields(fields, "test", &config);
  EXPECT_TRUE(applied.ok()) << applied.ToString();
  return config;
}

struct OperatorRow {
  json manifest;
  std::string flags;
};

TEST(OperatorConfig, TheManifestAndVerifyFlagsGiveTheSameConfig) {
  const std::vector<OperatorRow> rows = {
      {json::object(), ""},
      {{{"non_compute", true}}, "--non-compute"},
      {{{"standard", "strict"}}, "--standard strict"},
      {{{"standard", "npu_benchmark"}}, "--standard npu_benchmark"},
      {{{"precision_mode", "tf32"}}, "--precision-mode tf32"},
      {{{"precision_mode", nullptr}}, ""},
      {{{"timeout_s", 12.5}}, "--timeout 12.5"},
      {{{"warmup_timeout_s", 120}}, "--warmup-timeout 120"},
      {{{"lint", false}}, "--no-lint"},
      {{{"runtime_checks", false}}, "--no-runtime-checks"},
      {{{"ghost_replay", true}}, "--ghost-replay"},
      {{{"repeat", 4}}, "--repeat 4"},
      {{{"seeds", 1}}, "--seeds 1"},
      {{{"golden_precision", "fp64"}}, "--golden-precision fp64"},
      {{{"edge_cases", true}}, "--edge-cases"},
      {{{"standard", "mere_mare"}, {"seeds", 2}, {"lint", false}, {"timeout_s", 30}},
       "--standard mere_mare --seeds 2 --no-lint --timeout 30"},
  };
  for (const OperatorRow& row : rows) {
    EXPECT_EQ(Tie(FromManifest(row.manifest)), Tie(FromVerifyFlags(row.flags)))
        << row.manifest << " vs " << row.flags;
  }
}

TEST(OperatorConfig, FlagsWithoutAManifestKeyOnlyChangeTheirField) {
  OperatorConfig expected;
  expected.seed = 7;
  expected.probe_determinism = true;
  EXPECT_EQ(Tie(FromVerifyFlags("--seed 7 --probe-determinism")), Tie(expected));
}

TEST(OperatorConfig, BenchFlagsFillTheTimeoutAndSeedOfTheSameStruct) {
  OperatorConfig expected = FromManifest({{"timeout_s", 60}});
  expected.seed = 3;
  EXPECT_EQ(Tie(FromBenchFlags("--timeout 60 --seed 3").operator_config), Tie(expected));
}

struct BenchRow {
  json manifest;  // a manifest entry's "bench" object
  std::string flags;
};

TEST(BenchConfig, TheManifestAndBenchFlagsGiveTheSameConfig) {
  const std::vector<BenchRow> rows = {
      {json::object(), ""},
      {{{"warmup", 2}}, "--warmup 2"},
      {{{"repeats", 9}}, "--repeats 9"},
      {{{"adaptive", true}, {"max_repeats", 400}}, "--adaptive --max-repeats 400"},
      {{{"target_rse", 0.05}}, "--rse-target 0.05"},
      {{{"max_repeats", 70}}, "--max-repeats 70"},
      {{{"warmup", 0},
        {"repeats", 3},
        {"adaptive", true},
        {"target_rse", 0.2},
        {"max_repeats", 30}},
       "--warmup 0 --repeats 3 --adaptive --rse-target 0.2 --max-repeats 30"},
  };
  for (const BenchRow& row : rows) {
    BenchConfig from_manifest;  // the command line's defaults: only the given keys differ
    const Status applied = ApplyManifestBench(row.manifest, "test", &from_manifest);
    ASSERT_TRUE(applied.ok()) << applied.ToString();
    EXPECT_EQ(Tie(from_manifest), Tie(FromBenchFlags(row.flags).bench))
        << row.manifest << " vs " << row.flags;
  }
}

TEST(BenchConfig, CommandLineOnlySettingsFillTheSameStruct) {
  BenchConfig expected;
  expected.flush_l2 = false;
  expected.timing.profile_iterations = 0;
  expected.skip_framework = true;
  expected.framework_latency_ms = 1.5;
  EXPECT_EQ(Tie(FromBenchFlags(
                    "--no-flush --profile-iterations 0 --skip_framework --framework_latency_ms 1.5")
                    .bench),
            Tie(expected));
}

// The one place two paths differ: adaptive's cap when none is given.
TEST(BenchConfig, AManifestCapsAdaptiveAt1000WhereTheCommandLineTakes20TimesRepeats) {
  EXPECT_EQ(BenchConfig::ForManifest().timing.max_repeats, 1000);
  EXPECT_EQ(FromBenchFlags("").bench.timing.max_repeats, 0);
  EXPECT_EQ(FromBenchFlags("--repeats 7").bench.ToJson()["max_repeats"], 140);
  BenchConfig manifest = BenchConfig::ForManifest();
  ASSERT_TRUE(ApplyManifestBench({{"adaptive", true}}, "test", &manifest).ok());
  EXPECT_EQ(manifest.ToJson()["max_repeats"], 1000);
  // Everything else is the same default.
  manifest = BenchConfig::ForManifest();
  manifest.timing.max_repeats = 0;
  EXPECT_EQ(Tie(manifest), Tie(BenchConfig{}));
}

TEST(BenchConfig, AnAdaptiveCapBelowRepeatsIsRefusedNamingTheEntry) {
  BenchConfig config = BenchConfig::ForManifest();
  const Status refused = ApplyManifestBench(
      {{"adaptive", true}, {"repeats", 20}, {"max_repeats", 10}}, "m.json:/operators/0", &config);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.ToString().find(
                "m.json:/operators/0: bench.max_repeats (10) is below bench.repeats (20)"),
            std::string::npos)
      << refused.ToString();
}

TEST(BenchConfig, TheStoredRecordRoundTrips) {
  BenchConfig config =
      FromBenchFlags(
          "--warmup 1 --repeats 4 --adaptive --max-repeats 9 --rse-target 0.3 --no-flush")
          .bench;
  config.framework_latency_ms = 2.0;
  EXPECT_EQ(Tie(BenchConfig::FromJson(config.ToJson())), Tie(config));
}

}  // namespace
}  // namespace opverify
