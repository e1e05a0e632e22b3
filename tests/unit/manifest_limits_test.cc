// Hostile manifests: numbers out of range, names too long for a file name,
// files that are not files, sweeps too large to expand, nesting and strings
// too large to check. Each is refused with a message naming the file and the
// field, quickly, and never by an abort.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "runner/manifest/manifest.h"
#include "tests/support/scratch_dir_test.h"

namespace opverify {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kOps = std::string(OPVERIFY_SOURCE_DIR) + "/tests/fixtures/manifests/ops";

class ManifestLimitsTest : public testing::ScratchDirTest {
 protected:
  // Writes `text` to <dir_>/<name> and returns the path.
  std::string Write(const std::string& text, const std::string& name = "job.json") {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  // A manifest of one entry: alpha of the fixture ops with `fields` added.
  std::string Entry(const std::string& fields) {
    return Write(
        R"({"name": "j", "defaults": {"impl_name": "cpu_impl"}, "operators": [{"name": "alpha", "dir": ")" +
        kOps + "\"" + (fields.empty() ? "" : ", " + fields) + "}]}");
  }
  Status Refusal(const std::string& path, const ManifestLimits& limits = {}) {
    const Result<JobManifest> manifest = LoadManifest(path, limits);
    EXPECT_FALSE(manifest.ok()) << path << " was accepted";
    return manifest.status();
  }
};

TEST_F(ManifestLimitsTest, ANumberBeyondADoubleIsRefusedWithItsPosition) {
  // nlohmann throws out_of_range (not parse_error) for 1e400: it used to abort.
  const std::string path = Entry(R"("timeout_s": 1e400)");
  const Status status = Refusal(path);
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
  EXPECT_THAT(status.message(), StartsWith(path + ":1:"));
  EXPECT_THAT(status.message(), HasSubstr("1e400"));
  EXPECT_THAT(Refusal(Entry(R"("sweep": {"n": [-1e400]})")).message(), HasSubstr("-1e400"));
}

TEST_F(ManifestLimitsTest, NumbersOutOfRangeNameTheirField) {
  for (const auto& [fields, pointer] : std::vector<std::pair<std::string, std::string>>{
           {R"("timeout_s": 1e308)", "/operators/0/timeout_s"},
           {R"("timeout_s": 0)", "/operators/0/timeout_s"},
           {R"("repeat": -1)", "/operators/0/repeat"},
           {R"("seeds": 18446744073709551616)", "/operators/0/seeds"},
           {R"("seeds": 1e300)", "/operators/0/seeds"},
           {R"("bench": {"repeats": 99999999999})", "/operators/0/bench/repeats"},
           {R"("bench": {"warmup": -5})", "/operators/0/bench/warmup"},
           {R"("bench": {"target_rse": 1e308})", "/operators/0/bench/target_rse"},
           {R"("max_cases": 0)", "/operators/0/max_cases"}}) {
    const std::string path = Entry(fields);
    EXPECT_THAT(Refusal(path).message(), StartsWith(path + ": " + pointer + ": ")) << fields;
  }
}

TEST_F(ManifestLimitsTest, AnOperatorNameLongerThanAFileNameHoldsIsRefused) {
  const std::string name(300, 'a');
  const std::string path =
      Write(R"({"name": "j", "operators": [{"name": ")" + name + R"(", "dir": "."}]})");
  const Status status = Refusal(path);
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
  EXPECT_THAT(status.message(), StartsWith(path + ": /operators/0/name: "));
  const std::string impl = Entry(R"("impl_name": ")" + std::string(100, 'b') + "\"");
  EXPECT_THAT(Refusal(impl).message(), StartsWith(impl + ": /operators/0/impl_name: "));
}

TEST_F(ManifestLimitsTest, ADiscoveredNameLongerThan128IsRefused) {
  const std::string name(200, 'a');
  std::ofstream(dir_ + "/" + name + "_torch.py") << "";
  std::ofstream(dir_ + "/" + name + "_cpu_impl.py") << "";
  const std::string path =
      Write(R"({"name": "j", "operators": [{"glob": "*_torch.py", "impl_name": "cpu_impl"}]})");
  EXPECT_THAT(Refusal(path).message(), HasSubstr("at most 128"));
}

TEST_F(ManifestLimitsTest, FilesThatAreNotFilesAreRefusedWithoutOpeningThem) {
  // open(2) on a FIFO waits for a writer: each of these used to hang.
  const std::string fifo = dir_ + "/fifo.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(Refusal(fifo).message(), fifo + ": manifest is a FIFO, not a regular file");
  EXPECT_EQ(Refusal("/dev/zero").message(),
            "/dev/zero: manifest is a character device, not a regular file");
  const std::string include = Write(R"({"name": "j", "include": ["fifo.json"], "operators": []})");
  EXPECT_EQ(Refusal(include).message(), include + ": /include/0: " + fifo +
                                            ": included manifest is a FIFO, not a regular file");
  // A task file that is a FIFO.
  fs::create_directory(dir_ + "/ops");
  ASSERT_EQ(mkfifo((dir_ + "/ops/op_torch.py").c_str(), 0644), 0);
  std::ofstream(dir_ + "/ops/op_cpu_impl.py") << "";
  const std::string task = Write(
      R"({"name": "j", "operators": [{"name": "op", "dir": "ops", "impl_name": "cpu_impl"}]})");
  const Status status = Refusal(task);
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
  EXPECT_THAT(status.message(), HasSubstr(task + ": /operators/0: " + dir_ +
                                          "/ops/op_torch.py: task file is a FIFO"));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

TEST_F(ManifestLimitsTest, ASweepOverItsCapIsRefusedBeforeItIsExpanded) {
  // 6 keys x 20 values: 64 million cases, which took minutes and tens of GB.
  std::string values = "[0";
  for (int i = 1; i < 20; ++i) values += ", " + std::to_string(i);
  values += "]";
  std::string sweep = R"("sweep": {)";
  for (char key = 'a'; key < 'g'; ++key)
    sweep += std::string(key == 'a' ? "" : ", ") + "\"" + key + "\": " + values;
  sweep += "}";
  const auto started = std::chrono::steady_clock::now();
  const std::string path = Entry(sweep);
  const Status status = Refusal(path);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  EXPECT_THAT(status.message(),
              StartsWith(path + ": /operators/0: operator 'alpha': its sweep makes 64000000 cases, "
                                "over the cap of 100000 per operator"));
  EXPECT_THAT(status.message(), HasSubstr("\"max_cases\""));
  EXPECT_THAT(status.message(), HasSubstr("--max-cases"));
}

TEST_F(ManifestLimitsTest, ALongSweepListIsRefusedByTheCapBeforeItsValuesAreCompared) {
  // The schema's uniqueItems compared every pair: 100,001 values took 100 s.
  std::string values = "[0";
  for (int i = 1; i <= 100000; ++i) values += ", " + std::to_string(i);
  const auto started = std::chrono::steady_clock::now();
  const std::string path = Entry(R"("sweep": {"n": )" + values + "]}");
  const Status status = Refusal(path);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  EXPECT_THAT(status.message(), HasSubstr("its sweep makes 100001 cases, over the cap of 100000"));
}

TEST_F(ManifestLimitsTest, ASweepListingAValueTwiceIsRefusedNamingIt) {
  const std::string path = Entry(R"("sweep": {"n": [1, 2, 3], "mode": ["a", "b", "a"]})");
  EXPECT_THAT(Refusal(path).message(),
              StartsWith(path + ": /operators/0: sweep 'mode' lists \"a\" twice (its values must "
                                "be distinct)"));
  const Result<JobManifest> distinct =
      LoadManifest(Entry(R"("sweep": {"n": [1, "1", 1.5, true]})"));
  EXPECT_TRUE(distinct.ok()) << distinct.status().ToString();
}

TEST_F(ManifestLimitsTest, TheCapsAreRaisedOrLoweredByTheManifestAndByTheFlags) {
  const std::string sweep = R"("sweep": {"a": [1, 2, 3], "b": [1, 2, 3, 4]})";  // 12 cases
  EXPECT_TRUE(LoadManifest(Entry(sweep)).ok());
  EXPECT_THAT(Refusal(Entry(sweep + R"(, "max_cases": 11)")).message(),
              HasSubstr("over the cap of 11 per operator"));
  ManifestLimits flags;
  flags.operator_cases = 12;  // --max-cases wins over the manifest's field
  EXPECT_TRUE(LoadManifest(Entry(sweep + R"(, "max_cases": 11)"), flags).ok());
  flags.operator_cases = 11;
  EXPECT_FALSE(LoadManifest(Entry(sweep + R"(, "max_cases": 1000)"), flags).ok());
  // The job's cap counts every operator's sweep together.
  const std::string two =
      Write(R"({"name": "j", "max_job_cases": 20, "defaults": {"impl_name": "cpu_impl"},
    "operators": [{"name": "alpha", "dir": ")" +
            kOps + R"(", )" + sweep + R"(},
                  {"name": "beta", "dir": ")" +
            kOps + R"(", )" + sweep + R"(}]})");
  EXPECT_THAT(Refusal(two).message(), HasSubstr("/operators/1: operator 'beta': its sweep's 12 "
                                                "cases bring the job to 24, over the cap of 20 "
                                                "per job"));
  ManifestLimits job;
  job.job_cases = 24;
  EXPECT_TRUE(LoadManifest(two, job).ok());
}

TEST_F(ManifestLimitsTest, A64KeySweepDoesNotOverflowItsCount) {
  std::string sweep = R"("sweep": {)";
  for (int i = 0; i < 64; ++i)
    sweep += std::string(i ? ", " : "") + "\"k" + std::to_string(i) + "\": [0, 1]";
  EXPECT_THAT(Refusal(Entry(sweep + "}")).message(), HasSubstr("makes more than 2^64 cases"));
}

TEST_F(ManifestLimitsTest, AnAbsoluteGlobIsUsedAsGiven) {
  const std::string path = Write(R"({"name": "j", "operators": [{"glob": ")" + kOps +
                                 R"(/*_torch.py", "impl_name": "cpu_impl"}]})");
  const Result<JobManifest> manifest = LoadManifest(path);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  ASSERT_EQ(manifest->operators.size(), 3u);
  EXPECT_EQ(manifest->operators[0].code.task_file, kOps + "/alpha_torch.py");
}

TEST_F(ManifestLimitsTest, DeepNestingAndHugeStringsAreRefusedBeforeTheSchema) {
  // std::regex recurses per character: a 200000-character name overflowed the stack.
  const std::string huge(200000, 'a');
  const std::string named =
      Write(R"({"name": "j", "operators": [{"name": ")" + huge + R"(", "dir": "."}]})");
  EXPECT_THAT(
      Refusal(named).message(),
      StartsWith(named + ": /operators/0/name: a string of 200000 characters (at most 4096"));
  const std::string deep = Write(R"({"name": "j", "operators": [], "x": )" +
                                 std::string(100000, '[') + std::string(100000, ']') + "}");
  EXPECT_THAT(Refusal(deep).message(), HasSubstr("nested deeper than 32 levels"));
}

}  // namespace
}  // namespace opverify
