// Job manifests: the shipped jobs/*.json load with the operators they are
// meant to hold; sweeps, defaults, includes and discovery resolve as
// docs/MANIFEST.md says; bad manifests (tests/fixtures/manifests/bad) are
// refused with a message naming the file and the place.
#include "runner/manifest/manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace opverify {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kSource = OPVERIFY_SOURCE_DIR;
const std::string kFixtures = kSource + "/tests/fixtures/manifests";

JobManifest MustLoad(const std::string& path) {
  Result<JobManifest> manifest = LoadManifest(path);
  EXPECT_TRUE(manifest.ok()) << manifest.status().ToString();
  return manifest.ok() ? std::move(manifest).value() : JobManifest{};
}

std::vector<std::string> Names(const JobManifest& manifest) {
  std::vector<std::string> names;
  for (const OperatorJob& op : manifest.operators) names.push_back(op.name);
  return names;
}

const OperatorJob& Find(const JobManifest& manifest, const std::string& name) {
  const auto it = std::find_if(manifest.operators.begin(), manifest.operators.end(),
                               [&](const OperatorJob& op) { return op.name == name; });
  if (it == manifest.operators.end()) {
    ADD_FAILURE() << name << " not in " << manifest.path;
    static const OperatorJob kNone;
    return kNone;
  }
  return *it;
}

// Operator names of the task files in a folder, sorted.
std::vector<std::string> TasksIn(const std::string& dir) {
  std::vector<std::string> names;
  const std::string suffix = "_torch.py";
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    if (file.size() > suffix.size() &&
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0) {
      names.push_back(file.substr(0, file.size() - suffix.size()));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The message a bad fixture is refused with (and that it is refused).
Status Refusal(const std::string& fixture) {
  Result<JobManifest> manifest = LoadManifest(kFixtures + "/bad/" + fixture);
  EXPECT_FALSE(manifest.ok()) << fixture << " was accepted";
  return manifest.status();
}

// Runs with the working directory set to `dir`, as a user who names a
// manifest by a relative path.
class InDirectory {
 public:
  explicit InDirectory(const std::string& dir) : previous_(fs::current_path()) {
    fs::current_path(dir);
  }
  ~InDirectory() { fs::current_path(previous_); }
  InDirectory(const InDirectory&) = delete;
  InDirectory& operator=(const InDirectory&) = delete;

 private:
  fs::path previous_;
};

// ---- The shipped manifests --------------------------------------------

TEST(ShippedManifests, EveryJobsFileLoads) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(kSource + "/jobs")) {
    if (entry.path().extension() != ".json") continue;
    ++count;
    Result<JobManifest> manifest = LoadManifest(entry.path().string());
    EXPECT_TRUE(manifest.ok()) << manifest.status().ToString();
  }
  EXPECT_GE(count, 5);
}

TEST(ShippedManifests, AllCoversEveryOperatorInOps) {
  const JobManifest all = MustLoad(kSource + "/jobs/all.json");
  EXPECT_EQ(all.name, "all");
  EXPECT_EQ(Names(all), TasksIn(kSource + "/jobs/ops"));
  EXPECT_EQ(all.operators.size(), 13u);
  for (const OperatorJob& op : all.operators) {
    EXPECT_EQ(op.code.impl_name, "triton_impl");
    EXPECT_EQ(op.code.impl_file, kSource + "/jobs/ops/" + op.name + "_triton_impl.py");
    EXPECT_EQ(op.code.task_file, kSource + "/jobs/ops/" + op.name + "_torch.py");
    EXPECT_TRUE(op.cases.empty()) << op.name << ": the task's own CASES";
    EXPECT_FALSE(op.config.non_compute.has_value()) << op.name << ": the task file decides";
    EXPECT_TRUE(op.config.lint);
    EXPECT_EQ(op.source, kSource + "/jobs/all.json:/operators/0");
  }
}

TEST(ShippedManifests, SmokeIsAQuickSubsetOfAll) {
  const JobManifest smoke = MustLoad(kSource + "/jobs/smoke.json");
  EXPECT_THAT(Names(smoke), ElementsAre("softmax", "transpose2d", "quant_int8", "argmax"));
  const std::vector<std::string> all = TasksIn(kSource + "/jobs/ops");
  for (const OperatorJob& op : smoke.operators) {
    EXPECT_TRUE(std::count(all.begin(), all.end(), op.name)) << op.name;
    EXPECT_LE(op.bench.timing.repeats, 10);
  }
  EXPECT_EQ(Find(smoke, "softmax").cases.size(), 4u);
}

TEST(ShippedManifests, DefectsCoverEveryDefectWithAShortHang) {
  const JobManifest defects = MustLoad(kSource + "/jobs/defects.json");
  std::vector<std::string> names = Names(defects);
  EXPECT_EQ(names.back(), "hang_kernel");  // the explicit entry after the glob
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, TasksIn(kSource + "/jobs/defects"));
  EXPECT_EQ(Find(defects, "hang_kernel").config.timeout_s, 20);
  EXPECT_GT(Find(defects, "gelu_mask_bug").config.timeout_s, 20);
  for (const OperatorJob& op : defects.operators) EXPECT_FALSE(op.bench.enabled) << op.name;
}

TEST(ShippedManifests, CpuSmokeHoldsThePassingCpuFixtures) {
  const JobManifest smoke = MustLoad(kSource + "/jobs/cpu_smoke.json");
  EXPECT_THAT(Names(smoke), ElementsAre("relu_ok", "quant_ok", "transpose_ok", "golden_fallback",
                                        "hidden_state_ok"));
  for (const OperatorJob& op : smoke.operators) {
    EXPECT_EQ(op.code.impl_file, kSource + "/tests/fixtures/cpu_ops/" + op.name + "_cpu_impl.py");
    EXPECT_FALSE(op.config.lint);
  }
}

TEST(ShippedManifests, CpuMixedAddsFailuresAndASweep) {
  const JobManifest mixed = MustLoad(kSource + "/jobs/cpu_mixed.json");
  EXPECT_THAT(Names(mixed), ElementsAre("relu_ok", "quant_ok", "transpose_ok", "golden_fallback",
                                        "hidden_state_ok", "scale_accuracy", "nan_bad",
                                        "crash_second_case", "runtime_bad", "add_sweep"));
  const OperatorJob& sweep = Find(mixed, "add_sweep");
  ASSERT_EQ(sweep.cases.size(), 6u);
  // dtype before n (key order), each in the order the manifest gives.
  EXPECT_EQ(sweep.cases.front(), json::parse(R"({"dtype": "float32", "n": 1})"));
  EXPECT_EQ(sweep.cases[3], json::parse(R"({"dtype": "bfloat16", "n": 1})"));
  EXPECT_EQ(sweep.cases.back(), json::parse(R"({"dtype": "bfloat16", "n": 1023})"));
  EXPECT_EQ(Find(mixed, "relu_ok").source, kSource + "/jobs/cpu_smoke.json:/operators/0");
}

// perf/bench_accuracy.py --job expands these sweeps itself, in the same
// order: keys sorted, the first one outermost.
TEST(ShippedManifests, PerfLargeTimesFiveOperatorsOfOpsOnOneSeed) {
  const JobManifest perf = MustLoad(kSource + "/jobs/perf_large.json");
  EXPECT_THAT(Names(perf), ElementsAre("softmax", "layernorm", "rmsnorm", "matmul", "gelu_tanh"));
  for (const OperatorJob& op : perf.operators) {
    EXPECT_EQ(op.code.task_file, kSource + "/jobs/ops/" + op.name + "_torch.py");
    EXPECT_EQ(op.config.seeds, 1) << op.name;
    EXPECT_TRUE(op.bench.enabled) << op.name;
    EXPECT_EQ(op.bench.timing.repeats, 100) << op.name;
    EXPECT_EQ(op.cases.size(), 2u) << op.name;
  }
  EXPECT_EQ(Find(perf, "softmax").cases.front(),
            json::parse(R"({"cols": 8192, "dtype": "float16", "rows": 16384})"));
  EXPECT_EQ(Find(perf, "matmul").cases.back(),
            json::parse(R"({"K": 4096, "M": 4096, "N": 4096, "dtype": "bfloat16"})"));
}

// ---- Sweeps and case ids ------------------------------------------------

TEST(Sweep, IsTheCartesianProductInKeyOrderLastKeyFastest) {
  const JobManifest manifest = MustLoad(kFixtures + "/sweep.json");
  const OperatorJob& alpha = Find(manifest, "alpha");
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < alpha.cases.size(); ++i) {
    ids.push_back(CaseId(alpha.name, alpha.cases[i], static_cast<int>(i)));
  }
  EXPECT_THAT(ids, ElementsAre(R"(alpha/{"dtype":"float16","rows":1,"scale":0.5})",
                               R"(alpha/{"dtype":"float16","rows":2,"scale":0.5})",
                               R"(alpha/{"dtype":"float32","rows":1,"scale":0.5})",
                               R"(alpha/{"dtype":"float32","rows":2,"scale":0.5})",
                               R"(alpha/{"dtype":"bfloat16","rows":1,"scale":0.5})",
                               R"(alpha/{"dtype":"bfloat16","rows":2,"scale":0.5})"));
  EXPECT_TRUE(Find(manifest, "beta").cases.empty());
}

// Expansion and ids themselves: tests/unit/cases_test.cc.
TEST(CaseId, OfAShippedSweepIsTheSameOnEveryLoad) {
  const JobManifest first = MustLoad(kSource + "/jobs/cpu_mixed.json");
  const JobManifest second = MustLoad(kSource + "/jobs/cpu_mixed.json");
  EXPECT_EQ(CaseId("add_sweep", Find(first, "add_sweep").cases[4], 4),
            CaseId("add_sweep", Find(second, "add_sweep").cases[4], 4));
  EXPECT_EQ(CaseId("add_sweep", Find(first, "add_sweep").cases[4], 4),
            R"(add_sweep/{"dtype":"bfloat16","n":1000})");
}

// ---- Defaults and overrides -------------------------------------------

TEST(Defaults, ApplyToEveryOperatorOfTheFileUnlessOverridden) {
  const JobManifest manifest = MustLoad(kFixtures + "/defaults.json");
  EXPECT_THAT(Names(manifest), ElementsAre("alpha", "beta", "gamma"));

  const OperatorJob& alpha = Find(manifest, "alpha");
  EXPECT_EQ(alpha.code.impl_name, "cpu_impl");
  EXPECT_EQ(alpha.config.standard, Standard::kStrict);
  EXPECT_EQ(alpha.config.precision_mode, PrecisionMode::kNone);
  EXPECT_EQ(alpha.config.timeout_s, 30);
  EXPECT_FALSE(alpha.config.lint);
  EXPECT_FALSE(alpha.config.non_compute.has_value());
  EXPECT_EQ(alpha.bench.warmup, 3);
  EXPECT_EQ(alpha.bench.timing.repeats, 7);
  EXPECT_TRUE(alpha.bench.enabled);
  EXPECT_EQ(alpha.bench.timing.max_repeats, BenchConfig::ForManifest().timing.max_repeats);
  EXPECT_THAT(alpha.tags, ElementsAre("base"));
  EXPECT_FALSE(alpha.task_sha256.has_value());

  const OperatorJob& beta = Find(manifest, "beta");
  EXPECT_EQ(beta.config.standard, Standard::kEco);
  EXPECT_EQ(beta.config.precision_mode, PrecisionMode::kTF32);
  EXPECT_EQ(beta.config.non_compute, std::optional<bool>(true));
  EXPECT_EQ(beta.config.timeout_s, 5);
  EXPECT_TRUE(beta.config.lint);
  EXPECT_EQ(beta.bench.warmup, 3);  // bench merges key by key
  EXPECT_EQ(beta.bench.timing.repeats, 9);
  EXPECT_TRUE(beta.bench.timing.adaptive);
  EXPECT_DOUBLE_EQ(beta.bench.timing.rse_target, 0.02);
  EXPECT_THAT(beta.tags, ElementsAre("own"));  // lists replace
  EXPECT_EQ(beta.task_sha256,
            std::optional<std::string>(
                "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));

  const OperatorJob& gamma = Find(manifest, "gamma");  // a discovery entry's overrides
  EXPECT_EQ(gamma.config.timeout_s, 12);
  EXPECT_EQ(gamma.config.standard, Standard::kStrict);
  EXPECT_EQ(gamma.config.precision_mode, PrecisionMode::kNone);
  EXPECT_EQ(gamma.source, kFixtures + "/defaults.json:/operators/2");
}

TEST(Defaults, WithoutAnyTheBuiltInOnesHold) {
  const JobManifest manifest = MustLoad(kFixtures + "/nested/include_leaf.json");
  const OperatorJob& beta = Find(manifest, "beta");
  const OperatorJob built_in;
  EXPECT_EQ(beta.config.standard, built_in.config.standard);
  EXPECT_EQ(beta.config.timeout_s, built_in.config.timeout_s);
  EXPECT_EQ(beta.config.lint, built_in.config.lint);
  EXPECT_EQ(beta.bench.timing.repeats, built_in.bench.timing.repeats);
  EXPECT_TRUE(beta.tags.empty());
}

// ---- Includes -----------------------------------------------------------

TEST(Include, IncludedOperatorsComeFirstAndPathsAreRelativeToTheIncluder) {
  const JobManifest manifest = MustLoad(kFixtures + "/include_top.json");
  EXPECT_EQ(manifest.name, "include_top");
  EXPECT_EQ(manifest.path, kFixtures + "/include_top.json");
  EXPECT_THAT(Names(manifest), ElementsAre("beta", "alpha", "gamma"));
  for (const OperatorJob& op : manifest.operators) {
    EXPECT_EQ(op.code.task_file, kFixtures + "/ops/" + op.name + "_torch.py");
  }
  EXPECT_EQ(Find(manifest, "beta").source, kFixtures + "/nested/include_leaf.json:/operators/0");
  // Each file's defaults stay in that file.
  EXPECT_EQ(Find(manifest, "beta").config.timeout_s, 900);
  EXPECT_EQ(Find(manifest, "alpha").config.timeout_s, 22);
  EXPECT_EQ(Find(manifest, "gamma").config.timeout_s, 11);
}

TEST(Include, ACycleIsRefusedNamingTheChain) {
  const Status status = Refusal("cycle_a.json");
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
  const std::string a = kFixtures + "/bad/cycle_a.json";
  const std::string b = kFixtures + "/bad/cycle_b.json";
  EXPECT_EQ(status.message(), b + ": /include/0: include cycle: " + a + " -> " + b + " -> " + a);
}

TEST(Include, AMissingIncludeIsNotFound) {
  const Status status = Refusal("missing_include.json");
  EXPECT_EQ(status.code(), Status::Code::kNotFound);
  EXPECT_EQ(status.message(), kFixtures +
                                  "/bad/missing_include.json: /include/1: included manifest " +
                                  kFixtures + "/bad/nowhere.json not found");
}

// ---- Discovery ------------------------------------------------------------

TEST(Discovery, FindsTaskFilesByGlobSortedLessExcluded) {
  const JobManifest manifest = MustLoad(kFixtures + "/discovery.json");
  EXPECT_THAT(Names(manifest), ElementsAre("alpha", "gamma"));
  EXPECT_EQ(Find(manifest, "gamma").code.impl_file, kFixtures + "/ops/gamma_cpu_impl.py");
}

TEST(Discovery, AMissingImplementationIsNotFoundNamingIt) {
  const Status status = Refusal("missing_impl_discovered.json");
  EXPECT_EQ(status.code(), Status::Code::kNotFound);
  EXPECT_EQ(status.message(), kFixtures +
                                  "/bad/missing_impl_discovered.json: /operators/0: "
                                  "implementation file " +
                                  kFixtures + "/ops_lonely/lonely_cpu_impl.py not found");
}

TEST(Discovery, AGlobThatFindsNothingIsRefused) {
  const Status status = Refusal("glob_no_match.json");
  EXPECT_EQ(status.code(), Status::Code::kNotFound);
  EXPECT_THAT(status.message(),
              HasSubstr("glob_no_match.json: /operators/0: glob '../ops/z*_torch.py' "
                        "finds no task file"));
}

// ---- Bad manifests ------------------------------------------------------

TEST(BadManifest, SyntaxErrorNamesFileLineAndColumn) {
  const Status status = Refusal("syntax_error.json");
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
  // Line 4 is `    {"name": "alpha" "dir": "../ops"}`: the second string is unexpected.
  EXPECT_THAT(status.message(), StartsWith(kFixtures + "/bad/syntax_error.json:4:"));
  EXPECT_THAT(status.message(), HasSubstr("syntax error while parsing object"));
  EXPECT_THAT(status.message(), ::testing::Not(HasSubstr("json.exception")));
}

TEST(BadManifest, SyntaxErrorPositionIsNlohmannsOwn) {
  // Our line:column, computed from the byte offset, agree with the position
  // nlohmann prints itself.
  const std::string text = "{\n  \"a\": [1,\n   2,,]\n}";
  try {
    const json parsed = json::parse(text);
    FAIL() << "parsed " << parsed.dump();
  } catch (const json::parse_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("line 3, column 6"));
  }
  const fs::path file =
      fs::temp_directory_path() / ("manifest_test_" + std::to_string(getpid()) + ".json");
  {
    FILE* out = std::fopen(file.c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::fputs(text.c_str(), out);
    std::fclose(out);
  }
  const Result<JobManifest> manifest = LoadManifest(file.string());
  fs::remove(file);
  ASSERT_FALSE(manifest.ok());
  EXPECT_THAT(manifest.status().message(), StartsWith(file.string() + ":3:6: "));
}

TEST(BadManifest, UnknownKeyNamesItsJsonPath) {
  const Status status = Refusal("unknown_key.json");
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(status.message(), kFixtures +
                                  "/bad/unknown_key.json: /operators/1/timout_s: unknown field "
                                  "'timout_s' (not allowed here by schemas/jobs.schema.json)");
}

TEST(BadManifest, WrongTypeNamesThePathAndTheValue) {
  const Status status = Refusal("wrong_type.json");
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
  EXPECT_THAT(status.message(),
              StartsWith(kFixtures + "/bad/wrong_type.json: /operators/0/timeout_s: "));
  EXPECT_THAT(status.message(), HasSubstr("type"));
  EXPECT_THAT(status.message(), HasSubstr("(value: \"fast\"; expected: \"number\")"));
  EXPECT_EQ(status.message().find('\n'), std::string::npos) << "one failure, one line";
}

TEST(BadManifest, BadEnumValueNamesThePathAndTheValue) {
  const Status status = Refusal("bad_enum.json");
  EXPECT_THAT(status.message(),
              StartsWith(kFixtures + "/bad/bad_enum.json: /operators/0/standard: "));
  EXPECT_THAT(status.message(), HasSubstr("enum"));
  EXPECT_THAT(
      status.message(),
      HasSubstr(
          "(value: \"exact\"; allowed: \"eco\", \"npu_benchmark\", \"mere_mare\", \"strict\")"));
}

TEST(BadManifest, MissingRequiredFieldNamesIt) {
  EXPECT_THAT(Refusal("missing_name.json").message(),
              StartsWith(kFixtures + "/bad/missing_name.json: (root): "));
  EXPECT_THAT(Refusal("missing_name.json").message(), HasSubstr("'name'"));
}

TEST(BadManifest, ADiscoveryEntryCannotNameAnOperator) {
  EXPECT_THAT(Refusal("discovery_with_name.json").message(),
              HasSubstr("discovery_with_name.json: /operators/0/name: unknown field 'name'"));
}

TEST(BadManifest, SweepValuesAreNonEmptyListsOfScalars) {
  EXPECT_THAT(Refusal("empty_sweep_values.json").message(),
              StartsWith(kFixtures + "/bad/empty_sweep_values.json: /operators/0/sweep/rows: "));
  EXPECT_THAT(Refusal("sweep_object_value.json").message(),
              StartsWith(kFixtures + "/bad/sweep_object_value.json: /operators/0/sweep/rows/1: "));
}

TEST(BadManifest, MissingTaskFileIsNotFoundNamingEntryAndPath) {
  const Status status = Refusal("missing_task.json");
  EXPECT_EQ(status.code(), Status::Code::kNotFound);
  EXPECT_EQ(status.message(), kFixtures + "/bad/missing_task.json: /operators/1: task file " +
                                  kFixtures + "/ops/nosuch_torch.py not found");
}

TEST(BadManifest, MissingImplementationFileIsNotFoundNamingIt) {
  const Status status = Refusal("missing_impl.json");
  EXPECT_EQ(status.code(), Status::Code::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("/operators/0: implementation file "));
  EXPECT_THAT(status.message(), HasSubstr("/ops/alpha_triton_impl.py not found"));
}

TEST(BadManifest, MessagesNameFilesAsTheUserDid) {
  const InDirectory here(kFixtures);
  const Result<JobManifest> manifest = LoadManifest("bad/missing_task.json");
  ASSERT_FALSE(manifest.ok());
  EXPECT_EQ(manifest.status().message(),
            "bad/missing_task.json: /operators/1: task file ops/nosuch_torch.py not found");
  // The paths an operator carries are absolute all the same.
  const JobManifest discovered = MustLoad("discovery.json");
  EXPECT_EQ(discovered.path, kFixtures + "/discovery.json");
  EXPECT_EQ(Find(discovered, "alpha").code.task_file, kFixtures + "/ops/alpha_torch.py");
  EXPECT_EQ(Find(discovered, "alpha").source, "discovery.json:/operators/0");
}

TEST(BadManifest, DuplicateOperatorNamesBothSources) {
  const Status status = Refusal("duplicate.json");
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
  const std::string file = kFixtures + "/bad/duplicate.json";
  EXPECT_EQ(status.message(), file +
                                  ": /operators/2: duplicate operator 'alpha': already listed at " +
                                  file + ":/operators/0");
}

TEST(BadManifest, DuplicateAcrossAnIncludeNamesBothSourcesAndTheChain) {
  const Status status = Refusal("duplicate_include.json");
  EXPECT_EQ(status.message(), kFixtures +
                                  "/bad/duplicate_include.json: /operators/0: duplicate operator "
                                  "'gamma': already listed at " +
                                  kFixtures + "/discovery.json:/operators/0 (included via " +
                                  kFixtures + "/bad/duplicate_include.json -> " + kFixtures +
                                  "/discovery.json)");
}

TEST(BadManifest, AJobWithoutOperatorsIsRefused) {
  EXPECT_THAT(Refusal("no_operators.json").message(), HasSubstr("names no operator"));
}

TEST(BadManifest, AdaptiveBenchNeedsRoomForItsRepeats) {
  EXPECT_THAT(Refusal("adaptive_bounds.json").message(),
              HasSubstr("adaptive_bounds.json: /operators/0: bench.max_repeats (10) is below "
                        "bench.repeats (50)"));
}

TEST(BadManifest, AMissingManifestIsNotFound) {
  const Result<JobManifest> manifest = LoadManifest(kFixtures + "/nowhere.json");
  ASSERT_FALSE(manifest.ok());
  EXPECT_EQ(manifest.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(manifest.status().message(), kFixtures + "/nowhere.json: no such manifest");
}

// ---- library-backed and dispatch-override operators ----------------------

const std::string kLibrary = kSource + "/tests/fixtures/library";

TEST(LibraryManifest, OverrideEntriesHaveNoFilesAndKeepTheirCall) {
  const JobManifest job = MustLoad(kLibrary + "/cpu_override.json");
  EXPECT_THAT(Names(job),
              ElementsAre("softmax_right", "softmax_pair", "softmax_wrong", "softmax_unreached",
                          "isclose_composite"));
  const OperatorJob& right = Find(job, "softmax_right");
  EXPECT_TRUE(right.code.task_file.empty());
  EXPECT_TRUE(right.code.impl_file.empty());
  EXPECT_EQ(right.code.override_spec.at("op"), "torch.softmax");
  EXPECT_EQ(right.code.override_spec.at("enable"), "ovlib:enabled");
  EXPECT_EQ(right.code.override_spec.at("args").at(1), -1);
  EXPECT_EQ(right.cases.size(), 8u);  // rows x cols x dtype = 2 x 2 x 2
  EXPECT_EQ(CaseId("softmax_right", right.cases[0], 0),
            R"(softmax_right/{"cols":16,"dtype":"float32","rows":1})");
  // The defaults' library and python_path, the folder made absolute beside the manifest.
  EXPECT_THAT(right.config.library, ElementsAre("ovlib"));
  EXPECT_THAT(right.config.python_path, ElementsAre(kLibrary + "/cpu_override"));
  EXPECT_EQ(right.config.seeds, 2);
  const OperatorJob& pair = Find(job, "softmax_pair");
  EXPECT_EQ(pair.code.override_spec.at("enable").at("enter"), "ovlib:enable");
  EXPECT_EQ(pair.code.override_spec.at("kwargs").at("dim"), 1);
}

TEST(LibraryManifest, LibraryBackedEntriesKeepTheirFilesAndDeclareThePackage) {
  const JobManifest job = MustLoad(kLibrary + "/cuda_library.json");
  const OperatorJob& lsoftmax = Find(job, "lsoftmax");
  EXPECT_EQ(lsoftmax.code.impl_file, kLibrary + "/cuda/ops/lsoftmax_triton_impl.py");
  EXPECT_TRUE(lsoftmax.code.override_spec.is_null());
  EXPECT_THAT(lsoftmax.config.library, ElementsAre("gpulib"));
  EXPECT_THAT(lsoftmax.config.python_path, ElementsAre(kLibrary + "/cuda"));
  EXPECT_TRUE(lsoftmax.config.lint);
  EXPECT_FALSE(Find(job, "lsoftmax_nolint").config.lint);
  EXPECT_TRUE(Find(job, "lsoftmax_nolint").config.runtime_checks);  // its own switch
  // The defaults' sweep gives the override entries their cases too.
  EXPECT_EQ(Find(job, "ov_softmax").cases.size(), 4u);
}

TEST(LibraryManifest, AnOperatorIsEitherFilesOrAnOverride) {
  EXPECT_THAT(Refusal("override_and_dir.json").message(),
              HasSubstr("override_and_dir.json: /operators/0"));
}

TEST(LibraryManifest, AnOverrideNeedsALibrary) {
  EXPECT_EQ(Refusal("override_no_library.json").message(),
            kFixtures +
                "/bad/override_no_library.json: /operators/0: an override operator needs 'library' "
                "(here or "
                "in defaults): the packages whose kernels must do the work");
}

TEST(LibraryManifest, AnOverridesParametersMustBeTheSweeps) {
  EXPECT_EQ(Refusal("override_unknown_param.json").message(),
            kFixtures +
                "/bad/override_unknown_param.json: /operators/0/override/args/0/shape/1: '$colz' "
                "names no "
                "sweep parameter");
}

TEST(LibraryManifest, TheEnableCallableIsModuleColonName) {
  EXPECT_THAT(Refusal("override_bad_enable.json").message(), HasSubstr("/operators/0"));
}

TEST(LibraryManifest, AMissingPythonPathFolderIsNotFound) {
  const Status status = Refusal("python_path_missing.json");
  EXPECT_EQ(status.code(), Status::Code::kNotFound);
  EXPECT_EQ(status.message(),
            kFixtures + "/bad/python_path_missing.json: /operators/0: python_path folder " +
                kFixtures + "/nowhere not found");
}

TEST(BadManifest, EveryBadFixtureIsRefused) {
  for (const auto& entry : fs::directory_iterator(kFixtures + "/bad")) {
    EXPECT_FALSE(LoadManifest(entry.path().string()).ok()) << entry.path();
  }
}

// ---- Declared exceptions (allow_torch) ------------------------------------

TEST(AllowTorch, OperatorAndLibraryAllowancesSayWhereTheyWereDeclared) {
  const std::string path = kSource + "/tests/fixtures/waiver/waiver.json";
  const JobManifest job = MustLoad(path);
  // The library's allowance applies to every operator that lists the package.
  for (const OperatorJob& op : job.operators) {
    ASSERT_FALSE(op.config.allow_torch.empty()) << op.name;
    const TorchAllowance& library = op.config.allow_torch.back();
    EXPECT_EQ(library.op, "torch.sort");
    EXPECT_EQ(library.library, "waivelib");
    EXPECT_EQ(library.declared_at, path + ":/libraries/waivelib/allow_torch/0");
  }
  const OperatorJob& plain = Find(job, "plain_scale");
  ASSERT_EQ(plain.config.allow_torch.size(), 2u);
  EXPECT_EQ(plain.config.allow_torch[0].op, "aten::topk");
  EXPECT_EQ(plain.config.allow_torch[0].library, "");
  EXPECT_EQ(plain.config.allow_torch[0].declared_at, path + ":/operators/3/allow_torch/0");
  const json sent = AllowancesToJson(plain.config.allow_torch);
  EXPECT_EQ(sent[0], json({{"op", "aten::topk"},
                           {"why", "an old top-k path, since rewritten as a kernel"},
                           {"declared_at", path + ":/operators/3/allow_torch/0"}}));
  EXPECT_EQ(sent[1]["library"], "waivelib");
}

TEST(AllowTorch, ADefaultsAllowanceIsDeclaredInTheDefaults) {
  const std::string dir = ::testing::TempDir() + "/allow_defaults";
  fs::create_directories(dir);
  const std::string path = dir + "/job.json";
  std::ofstream(path)
      << R"({"name": "d", "defaults": {"allow_torch": [{"op": "Tensor.sum", "why": "bookkeeping",
    "where": "lib/ops"}]}, "operators": [{"name": "a", "library": ["lib"], "override": {"op": "torch.abs",
    "enable": "lib:on", "args": [{"shape": [4]}]}}]})";
  const JobManifest job = MustLoad(path);
  ASSERT_EQ(job.operators.at(0).config.allow_torch.size(), 1u);
  EXPECT_EQ(job.operators[0].config.allow_torch[0].declared_at, path + ":/defaults/allow_torch/0");
  EXPECT_EQ(job.operators[0].config.allow_torch[0].where, "lib/ops");
}

TEST(AllowTorch, AnExceptionMustBeExplained) {
  EXPECT_THAT(Refusal("allow_torch_no_why.json").message(),
              HasSubstr("/operators/0/allow_torch/0: Missing required property 'why'"));
  EXPECT_THAT(Refusal("allow_torch_blank_why.json").message(),
              HasSubstr("/defaults/allow_torch/0"));
}

TEST(AllowTorch, BadNamesKeysRepeatsAndUnlistedLibrariesAreRefused) {
  EXPECT_THAT(Refusal("allow_torch_bad_op.json").message(),
              HasSubstr("/operators/0/allow_torch/0/op"));
  EXPECT_THAT(Refusal("allow_torch_unknown_key.json").message(),
              HasSubstr("/operators/0/allow_torch/0/file: unknown field 'file'"));
  EXPECT_THAT(Refusal("allow_torch_repeated.json").message(),
              HasSubstr("allow_torch_repeated.json:/operators/0/allow_torch/1: allowance of "
                        "'aten::sort' repeats " +
                        kFixtures + "/bad/allow_torch_repeated.json:/operators/0/allow_torch/0"));
  EXPECT_EQ(Refusal("libraries_unlisted.json").message(),
            kFixtures +
                "/bad/libraries_unlisted.json:/libraries/ovlibb: no operator of the job lists "
                "'ovlibb' in "
                "\"library\" (a typo?)");
}

TEST(AllowTorch, TheCommandLineFormIsOpEqualsWhy) {
  Result<TorchAllowance> parsed =
      ParseAllowanceFlag("aten::sort.stable=sorts by design: stable=True");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->op, "aten::sort.stable");
  EXPECT_EQ(parsed->why, "sorts by design: stable=True");
  EXPECT_EQ(parsed->declared_at, "--allow-torch aten::sort.stable");
  for (const char* bad :
       {"aten::sort", "aten::sort=", "aten::sort=  ", "=why", "sort=why", "aten:sort=why"}) {
    EXPECT_FALSE(ParseAllowanceFlag(bad).ok()) << bad;
  }
  EXPECT_THAT(ParseAllowanceFlag("aten::sort").status().message(), HasSubstr("give OP=WHY"));
  for (const char* good :
       {"torch.sort", "torch.nn.functional.gelu", "Tensor.sum", "aten::_softmax"})
    EXPECT_TRUE(IsTorchOperatorName(good)) << good;
}

}  // namespace
}  // namespace opverify
