// The clock monitor on a scripted clock (this machine has no GPU or NPU to
// watch): drift warnings, the statistics, failed reads, a prompt Stop; the
// npu-smi parser on npu-smi's real output; and NVML and npu-smi where they
// are missing, which must be an error naming them, not a crash.
#include "runner/bench/clock_monitor.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "tests/support/seconds_since.h"

namespace opverify {
namespace {

using Clock = std::chrono::steady_clock;

using testing::SecondsSince;

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A device's clock as the test sets it. Reads are counted under the same lock
// as the value is set, so "n reads after Set" means n reads saw the new value.
struct ScriptedDevice {
  std::mutex mutex;
  std::condition_variable read;
  double mhz = 0;
  std::string failure;  // non-empty: reads fail with it
  std::int64_t reads = 0;

  // Sets the clock (and failure), then waits until the sampler has read it `reads_after` times.
  bool Set(double new_mhz, int reads_after, std::string new_failure = "") {
    std::unique_lock<std::mutex> lock(mutex);
    mhz = new_mhz;
    failure = std::move(new_failure);
    const std::int64_t target = reads + reads_after;
    return read.wait_for(lock, std::chrono::seconds(10), [&] { return reads >= target; });
  }
  // Waits until the sampler has read the device `count` times in all (the
  // first read of a monitor may come before the test thread gets here).
  bool ReadAtLeast(std::int64_t count) {
    std::unique_lock<std::mutex> lock(mutex);
    return read.wait_for(lock, std::chrono::seconds(10), [&] { return reads >= count; });
  }
};

// Stands in for NVML or npu-smi: reads the scripted device.
class ScriptedClock : public ClockSource {
 public:
  explicit ScriptedClock(std::shared_ptr<ScriptedDevice> device) : device_(std::move(device)) {}
  std::string name() const override { return "nvml"; }
  std::string device() const override { return "GPU-scripted"; }
  Result<double> ReadMhz() override {
    std::lock_guard<std::mutex> lock(device_->mutex);
    ++device_->reads;
    device_->read.notify_all();
    if (!device_->failure.empty()) return Status::IoError(device_->failure);
    return device_->mhz;
  }

 private:
  std::shared_ptr<ScriptedDevice> device_;
};

class ClockMonitorTest : public ::testing::Test {
 protected:
  std::unique_ptr<ClockMonitor> Monitor(double interval_s, double tolerance = 0.05) {
    return std::make_unique<ClockMonitor>(std::make_unique<ScriptedClock>(device_), interval_s,
                                          tolerance);
  }
  std::shared_ptr<ScriptedDevice> device_ = std::make_shared<ScriptedDevice>();
};

TEST_F(ClockMonitorTest, DriftBeyondToleranceWarnsWithBothClocks) {
  device_->mhz = 1980;
  auto monitor = Monitor(0.005);
  monitor->Start();
  ASSERT_TRUE(monitor->SetBaseline().ok());
  ASSERT_TRUE(device_->Set(1410, 3));
  const ClockReport report = monitor->Stop();

  EXPECT_EQ(report.source, "nvml");
  EXPECT_EQ(report.device, "GPU-scripted");
  EXPECT_EQ(report.error, "");
  ASSERT_TRUE(report.baseline_mhz.has_value());
  EXPECT_EQ(*report.baseline_mhz, 1980);
  EXPECT_EQ(report.min_mhz, 1410);
  EXPECT_NEAR(report.max_drift_fraction, (1980.0 - 1410.0) / 1980.0, 1e-12);
  ASSERT_GE(report.warnings.size(), 3u);
  ASSERT_LE(report.warnings.size(), 6u);
  const std::string& first = report.warnings[0];
  EXPECT_TRUE(StartsWith(first, "SM clock 1410 MHz is 28.8% below the baseline 1980 MHz at "))
      << first;
  EXPECT_EQ(first.substr(first.size() - 2), " s") << first;
}

TEST_F(ClockMonitorTest, DriftWithinToleranceWarnsNothing) {
  device_->mhz = 1980;
  auto monitor = Monitor(0.005);
  monitor->Start();
  ASSERT_TRUE(monitor->SetBaseline().ok());
  ASSERT_TRUE(device_->Set(1950, 3));  // 1.5% below
  const ClockReport report = monitor->Stop();

  EXPECT_EQ(report.error, "");
  EXPECT_TRUE(report.warnings.empty()) << report.warnings[0];
  EXPECT_EQ(report.min_mhz, 1950);
  EXPECT_GE(report.max_mhz, 1950);  // 1980 only if a sample came between the baseline and the drop
  EXPECT_LE(report.max_mhz, 1980);
  EXPECT_NEAR(report.max_drift_fraction, 30.0 / 1980.0, 1e-12);
}

TEST_F(ClockMonitorTest, StatisticsCoverOnlySamplesAfterTheBaseline) {
  device_->mhz = 900;  // cold, during warm-up
  auto monitor = Monitor(0.005, /*tolerance=*/0.10);
  monitor->Start();
  ASSERT_TRUE(device_->Set(900, 2));
  ASSERT_TRUE(device_->Set(1500, 0));
  ASSERT_TRUE(monitor->SetBaseline().ok());
  ASSERT_TRUE(device_->Set(1600, 2));
  ASSERT_TRUE(device_->Set(1400, 2));
  const ClockReport report = monitor->Stop();

  EXPECT_EQ(report.error, "");
  EXPECT_EQ(*report.baseline_mhz, 1500);
  ASSERT_TRUE(report.baseline_t_s.has_value());
  EXPECT_EQ(report.min_mhz, 1400);  // not the warm-up's 900
  EXPECT_EQ(report.max_mhz, 1600);
  EXPECT_GE(report.samples, 4);
  // Both 100/1500 = 6.7% away: within 10%.
  EXPECT_NEAR(report.max_drift_fraction, 100.0 / 1500.0, 1e-12);
  EXPECT_TRUE(report.warnings.empty()) << report.warnings[0];
  // The series keeps the warm-up too, in order of time.
  ASSERT_GE(report.series.size(), static_cast<std::size_t>(report.samples) + 2);
  EXPECT_EQ(report.series.front().mhz, 900);
  EXPECT_TRUE(
      std::is_sorted(report.series.begin(), report.series.end(),
                     [](const ClockSample& a, const ClockSample& b) { return a.t_s < b.t_s; }));
  const nlohmann::json json = report.ToJson();
  EXPECT_EQ(json["samples"], report.samples);
  EXPECT_EQ(json["baseline_mhz"], 1500.0);
  EXPECT_EQ(json["sample_mhz"].size(), report.series.size());
}

TEST_F(ClockMonitorTest, WarningsStopAtFiveThenCountTheRest) {
  device_->mhz = 2000;
  auto monitor = Monitor(0.002);
  monitor->Start();
  ASSERT_TRUE(monitor->SetBaseline().ok());
  ASSERT_TRUE(device_->Set(1000, 9));
  const ClockReport report = monitor->Stop();

  const auto drifted = std::count_if(report.series.begin(), report.series.end(),
                                     [](const ClockSample& sample) { return sample.mhz == 1000; });
  ASSERT_GE(drifted, 9);
  ASSERT_EQ(report.warnings.size(), 6u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(StartsWith(report.warnings[i], "SM clock 1000 MHz is 50.0% below"))
        << report.warnings[i];
  }
  EXPECT_EQ(report.warnings[5],
            "... and " + std::to_string(drifted - 5) + " more samples beyond 5.0% of the baseline");
}

TEST_F(ClockMonitorTest, AFailedReadWarnsOnceAndSamplingGoesOn) {
  device_->mhz = 1980;
  auto monitor = Monitor(0.005);
  monitor->Start();
  ASSERT_TRUE(monitor->SetBaseline().ok());
  ASSERT_TRUE(device_->Set(1980, 4, "scripted: GPU has fallen off the bus"));
  ASSERT_TRUE(device_->Set(1980, 2));
  const ClockReport report = monitor->Stop();

  EXPECT_EQ(report.error, "");
  EXPECT_GE(report.samples, 2);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_TRUE(Contains(report.warnings[0], "clock reads failed; the first at "))
      << report.warnings[0];
  EXPECT_TRUE(Contains(report.warnings[0], "scripted: GPU has fallen off the bus"));
}

TEST_F(ClockMonitorTest, EveryReadFailingIsTheReportsError) {
  device_->failure = "scripted: NVML_ERROR_GPU_IS_LOST";
  auto monitor = Monitor(0.005);
  monitor->Start();
  const Status baseline = monitor->SetBaseline();
  EXPECT_FALSE(baseline.ok());
  EXPECT_EQ(baseline.message(), "scripted: NVML_ERROR_GPU_IS_LOST");
  ASSERT_TRUE(device_->Set(0, 2, "scripted: NVML_ERROR_GPU_IS_LOST"));
  const ClockReport report = monitor->Stop();

  EXPECT_TRUE(Contains(report.error, "scripted: NVML_ERROR_GPU_IS_LOST")) << report.error;
  EXPECT_EQ(report.samples, 0);
  EXPECT_FALSE(report.baseline_mhz.has_value());
  EXPECT_EQ(report.min_mhz, 0);
  EXPECT_EQ(report.max_mhz, 0);
}

TEST_F(ClockMonitorTest, StopDoesNotWaitOutTheInterval) {
  device_->mhz = 1980;
  auto monitor = Monitor(10.0);
  monitor->Start();
  ASSERT_TRUE(device_->ReadAtLeast(1));  // the first sample is taken at once
  const Clock::time_point start = Clock::now();
  const ClockReport report = monitor->Stop();
  EXPECT_LT(SecondsSince(start), 0.5);
  EXPECT_EQ(report.series.size(), 1u);
  EXPECT_EQ(report.samples, 1);  // no baseline: every sample counts
  EXPECT_EQ(report.min_mhz, 1980);
}

TEST_F(ClockMonitorTest, DestroyingARunningMonitorStopsItPromptly) {
  device_->mhz = 1980;
  auto monitor = Monitor(10.0);
  monitor->Start();
  ASSERT_TRUE(device_->ReadAtLeast(1));
  const Clock::time_point start = Clock::now();
  monitor.reset();
  EXPECT_LT(SecondsSince(start), 0.5);
}

TEST(ClockMonitor, WithoutASourceReportsNone) {
  ClockMonitor monitor(nullptr, 0.01);
  monitor.Start();
  EXPECT_FALSE(monitor.SetBaseline().ok());
  const ClockReport report = monitor.Stop();
  EXPECT_EQ(report.source, "none");
  EXPECT_EQ(report.device, "");
  EXPECT_NE(report.error, "");
  EXPECT_EQ(report.samples, 0);
}

TEST(ClockReport, JsonHasEveryFieldAndAtMostAThousandSamples) {
  ClockReport report;
  report.source = "npu-smi";
  report.device = "3";
  for (int i = 0; i < 5000; ++i) report.series.push_back({i * 0.01, static_cast<double>(i)});
  report.warnings = {"a warning"};
  const nlohmann::json json = report.ToJson();

  for (const char* key :
       {"source", "device", "baseline_mhz", "baseline_t_s", "min_mhz", "max_mhz", "samples",
        "max_drift_fraction", "warnings", "error", "sample_t_s", "sample_mhz"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_EQ(json["source"], "npu-smi");
  EXPECT_EQ(json["device"], "3");
  EXPECT_TRUE(json["baseline_mhz"].is_null());
  EXPECT_EQ(json["warnings"], nlohmann::json::array({"a warning"}));
  ASSERT_EQ(json["sample_mhz"].size(), 1000u);
  ASSERT_EQ(json["sample_t_s"].size(), 1000u);
  // Thinned evenly over the whole run: the first and the last are kept.
  EXPECT_EQ(json["sample_mhz"].front(), 0.0);
  EXPECT_EQ(json["sample_mhz"].back(), 4999.0);
  EXPECT_EQ(json["sample_t_s"].back(), 49.99);

  report.baseline_mhz = 1800;
  EXPECT_EQ(report.ToJson()["baseline_mhz"], 1800.0);
}

// What `npu-smi info -t common -i 0` prints on an Atlas 800T A2 (910B): each
// field "\t%-30s : %u"; after the NPU's chip, the board's MCU.
constexpr char kNpuSmiCommon[] =
    "\tNPU ID                         : 0\n"
    "\tChip Count                     : 1\n"
    "\n"
    "\tChip ID                        : 0\n"
    "\tMemory Usage Rate(%)           : 0\n"
    "\tHBM Usage Rate(%)              : 4\n"
    "\tAicore Usage Rate(%)           : 0\n"
    "\tAicore Freq(MHZ)               : 1800\n"
    "\tAicore curFreq(MHZ)            : 800\n"
    "\tAicore Count                   : 24\n"
    "\tTemperature(C)                 : 46\n"
    "\tNPU Real-time Power(W)         : 93.4\n"
    "\n"
    "\tChip Name                      : mcu\n"
    "\tTemperature(C)                 : 38\n";

TEST(NpuSmiParser, ReadsTheCurrentAicoreClockNotTheRatedOne) {
  EXPECT_EQ(ParseNpuSmiAicoreMhz(kNpuSmiCommon), std::optional<double>(800));
  EXPECT_EQ(ParseNpuSmiAicoreMhz("        Aicore curFreq(MHZ)            : 1800"),
            std::optional<double>(1800));
  EXPECT_EQ(ParseNpuSmiAicoreMhz("Aicore curFreq(MHZ)            : 1650\r\nAicore Count : 32\r\n"),
            std::optional<double>(1650));
}

TEST(NpuSmiParser, NoClockLineOrNoNumberIsNullopt) {
  EXPECT_EQ(ParseNpuSmiAicoreMhz(""), std::nullopt);
  EXPECT_EQ(ParseNpuSmiAicoreMhz("\tAicore Freq(MHZ)               : 1800\n"
                                 "\tTemperature(C)                 : 46\n"),
            std::nullopt);
  EXPECT_EQ(ParseNpuSmiAicoreMhz("dcmi module initialize failed. ret is -8005\n"), std::nullopt);
  EXPECT_EQ(ParseNpuSmiAicoreMhz("\tAicore curFreq(MHZ)            : NA\n"), std::nullopt);
  EXPECT_EQ(ParseNpuSmiAicoreMhz("\tAicore curFreq(MHZ)\n\tAicore Count : 24\n"), std::nullopt);
}

bool NvmlPresent() {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return false;
  dlclose(library);
  return true;
}

TEST(NvmlClock, WithoutTheDriverIsAnErrorNamingLibnvidiaMl) {
  if (NvmlPresent()) GTEST_SKIP() << "this machine has NVML";
  for (const char* device : {"0", "GPU-8e1a6a5e-1c3b-4c6b-9d0e-2f8c5b1a7d42"}) {
    Result<std::unique_ptr<ClockSource>> clock = OpenNvmlClock(device);
    ASSERT_FALSE(clock.ok()) << device;
    EXPECT_EQ(clock.status().code(), Status::Code::kNotFound);
    EXPECT_TRUE(Contains(clock.status().message(), "libnvidia-ml")) << clock.status().message();
  }
}

TEST(NvmlClock, ADeviceThatIsNeitherUuidNorIndexIsInvalidInput) {
  for (const char* device : {"", "cuda:0", "-1", "0x1", "GPU0"}) {
    Result<std::unique_ptr<ClockSource>> clock = OpenNvmlClock(device);
    ASSERT_FALSE(clock.ok()) << device;
    EXPECT_EQ(clock.status().code(), Status::Code::kInvalidInput) << device;
  }
}

TEST(NpuSmiClock, WithoutNpuSmiIsAnErrorNamingIt) {
  if (std::system("command -v npu-smi >/dev/null 2>&1") == 0) GTEST_SKIP() << "npu-smi is here";
  const Clock::time_point start = Clock::now();
  Result<std::unique_ptr<ClockSource>> clock = OpenNpuSmiClock(0);
  ASSERT_FALSE(clock.ok());
  EXPECT_EQ(clock.status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(Contains(clock.status().message(), "npu-smi")) << clock.status().message();
  EXPECT_LT(SecondsSince(start), 5.0);

  EXPECT_EQ(OpenNpuSmiClock(-1).status().code(), Status::Code::kInvalidInput);
}

}  // namespace
}  // namespace opverify
