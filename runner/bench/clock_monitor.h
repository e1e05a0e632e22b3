// Watching a device's clock while a benchmark times kernels: a kernel timed
// while the GPU/NPU throttles (heat, power cap, another job) is slow for a
// reason that is not the kernel's, so the benchmark samples the clock on a
// background thread and reports how far it strayed from the clock it had
// once warmed up (the baseline).
//
// The device's clock comes from NVML (NVIDIA: the SM clock) or from npu-smi
// (Ascend: the Aicore clock). Neither is linked: NVML is loaded at run time
// and npu-smi is a program, so the runner builds and runs where neither
// exists, and says so in the report instead.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/status.h"

namespace opverify {

struct ClockSample {
  double t_s = 0;  // seconds since ClockMonitor::Start()
  double mhz = 0;
};

struct ClockReport {
  std::string source;  // "nvml", "npu-smi", or "none"
  std::string device;  // the NVML UUID or index, or the npu index, as given; "" without a source
  // The clock SetBaseline read (nullopt: never called, or its read failed),
  // and when, in seconds since Start().
  std::optional<double> baseline_mhz;
  std::optional<double> baseline_t_s;
  // Over the samples taken after the baseline (all samples when there is no
  // baseline); 0 when there are none.
  double min_mhz = 0;
  double max_mhz = 0;
  int samples = 0;
  // Largest |mhz - baseline| / baseline over the samples after the baseline.
  double max_drift_fraction = 0;
  // Samples beyond the tolerance ("SM clock 1410 MHz is 28.8% below the
  // baseline 1980 MHz at 3.0 s", at most 5, then "... and N more"), and the
  // first failed read of the clock while sampling.
  std::vector<std::string> warnings;
  std::string error;  // why no sampling was possible ("" when it worked)
  // Every sample since Start(), before and after the baseline, in order.
  std::vector<ClockSample> series;

  // The fields above; the series as "sample_t_s" and "sample_mhz", thinned
  // evenly to at most kMaxJsonSamples (the times say which were kept).
  nlohmann::json ToJson() const;
  static constexpr std::size_t kMaxJsonSamples = 1000;
};

// One device's current clock.
class ClockSource {
 public:
  virtual ~ClockSource() = default;
  virtual std::string name() const = 0;  // "nvml" / "npu-smi"
  virtual std::string device() const = 0;
  // The current SM (NVIDIA) / Aicore (Ascend) clock in MHz.
  virtual Result<double> ReadMhz() = 0;
};

// NVML, loaded with dlopen("libnvidia-ml.so.1"). `device` is a UUID
// ("GPU-..." or "MIG-...") or an NVML index ("0"); prefer the UUID: NVML
// numbers GPUs in PCI order, CUDA by default fastest first. The clock is read
// once before this returns. Without the driver: an error naming libnvidia-ml.
Result<std::unique_ptr<ClockSource>> OpenNvmlClock(const std::string& device);

// `npu-smi info -t common -i <index>`, killed after a few seconds if it hangs,
// read once before this returns.
Result<std::unique_ptr<ClockSource>> OpenNpuSmiClock(int index);
// The first "Aicore curFreq(MHZ)            : 1800" value in npu-smi's output
// (one a chip; the first is the NPU's own); nullopt without one or when it is
// not a number.
std::optional<double> ParseNpuSmiAicoreMhz(const std::string& output);

// Samples a ClockSource on a background thread every interval_s. The source is
// only ever read by one thread at a time, so sources need no locking.
class ClockMonitor {
 public:
  // `source` may be null (no device clock could be opened): the report then
  // says "none" and why in `error`. interval_s is at least 1 ms.
  ClockMonitor(std::unique_ptr<ClockSource> source, double interval_s,
               double drift_tolerance = 0.05);
  ~ClockMonitor();  // stops the thread
  ClockMonitor(const ClockMonitor&) = delete;
  ClockMonitor& operator=(const ClockMonitor&) = delete;

  // Starts sampling, the first sample at once; forgets an earlier run's
  // samples and baseline. Does nothing while already sampling.
  void Start();
  // Reads the clock now: drift is measured against that value (call it after
  // warm-up). Safe while the thread samples; call it after Start(). A failed
  // read keeps the baseline there was (if any), returns the error and adds it
  // to the report's warnings.
  Status SetBaseline();
  // Stops sampling (without waiting out the interval) and reports. A sample
  // further than drift_tolerance from the baseline (as a fraction of it) adds
  // a warning.
  ClockReport Stop();

 private:
  using SteadyClock = std::chrono::steady_clock;
  void Run();
  void StopThread();
  double SecondsSinceStart() const;

  const std::unique_ptr<ClockSource> source_;
  const double interval_s_;
  const double drift_tolerance_;

  // Held across a read of source_ and the recording of its value: one read at
  // a time, and samples are recorded in the order they were read. Taken
  // before state_mutex_.
  std::mutex read_mutex_;
  std::mutex state_mutex_;  // everything below
  std::condition_variable wake_;
  bool stop_ = false;
  bool started_ = false;
  std::thread thread_;
  SteadyClock::time_point start_time_;
  std::vector<ClockSample> series_;
  std::optional<double> baseline_mhz_;
  std::optional<double> baseline_t_s_;
  std::size_t baseline_index_ = 0;  // series_[baseline_index_...] came after the baseline
  std::string baseline_error_;
  std::string first_read_error_;  // the first failed read while sampling, with its time
  std::int64_t failed_reads_ = 0;
};

}  // namespace opverify
