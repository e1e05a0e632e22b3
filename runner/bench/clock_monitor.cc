#include "runner/bench/clock_monitor.h"

#include <dlfcn.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

#include <spdlog/spdlog.h>

#include "runner/common/strings.h"
#include "runner/common/utf8.h"
#include "runner/process/subprocess.h"

namespace opverify {
namespace {

// The few NVML declarations used, written out so that building needs no nvml.h:
// nvmlReturn_t and nvmlClockType_t are C enums (passed as int), nvmlDevice_t an
// opaque pointer.
using NvmlReturn = int;
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr NvmlReturn kNvmlErrorInvalidArgument = 2;
constexpr NvmlReturn kNvmlErrorNotFound = 6;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM
constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";

using NvmlInitFn = NvmlReturn (*)();
using NvmlShutdownFn = NvmlReturn (*)();
using NvmlErrorStringFn = const char* (*)(NvmlReturn);
using NvmlGetHandleByUuidFn = NvmlReturn (*)(const char*, NvmlDevice*);
using NvmlGetHandleByIndexFn = NvmlReturn (*)(unsigned int, NvmlDevice*);
using NvmlGetClockInfoFn = NvmlReturn (*)(NvmlDevice, int, unsigned int*);

// How long npu-smi may run before it gets SIGTERM, and then SIGKILL:
// a wedged driver can leave it hanging, and the sampler must not hang with it.
constexpr int kNpuSmiTimeoutS = 5;
constexpr int kNpuSmiKillAfterS = 2;
constexpr std::size_t kMaxCommandOutput = 64 * 1024;

// Below this the sampler would spin on the device's management interface.
constexpr double kMinIntervalS = 0.001;
constexpr std::size_t kMaxDriftWarnings = 5;

// A decimal NVML index that fits an unsigned int, else nullopt.
std::optional<unsigned int> ParseIndex(const std::string& text) {
  unsigned int index = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, index);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return index;
}

std::string Trim(const std::string& text) {
  const char* const kSpace = " \t\r\n";
  const std::size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

// Program output made fit for one line of an error message.
std::string OneLine(const std::string& output) {
  std::string line = Trim(output);
  std::replace(line.begin(), line.end(), '\n', ' ');
  line.erase(std::remove(line.begin(), line.end(), '\r'), line.end());
  constexpr std::size_t kMax = 300;
  line = CodePointCount(line) > kMax ? Utf8Prefix(line, kMax) + "..." : ValidUtf8(line);
  return line.empty() ? "(no output)" : line;
}

class NvmlClock : public ClockSource {
 public:
  static Result<std::unique_ptr<ClockSource>> Open(const std::string& device);
  ~NvmlClock() override {
    if (initialized_) shutdown_();
    if (library_ != nullptr) dlclose(library_);
  }
  NvmlClock(const NvmlClock&) = delete;
  NvmlClock& operator=(const NvmlClock&) = delete;

  std::string name() const override { return "nvml"; }
  std::string device() const override { return device_; }
  Result<double> ReadMhz() override {
    unsigned int mhz = 0;
    const NvmlReturn code = get_clock_info_(handle_, kNvmlClockSm, &mhz);
    if (code != kNvmlSuccess) return Status::IoError(Error("nvmlDeviceGetClockInfo(SM)", code));
    return static_cast<double>(mhz);
  }

 private:
  explicit NvmlClock(std::string device) : device_(std::move(device)) {}

  template <typename Fn>
  Status Bind(const char* symbol, Fn* fn) {
    dlerror();
    void* address = dlsym(library_, symbol);
    if (address == nullptr) {
      const char* why = dlerror();
      return Status::Unsupported(std::string(kNvmlLibrary) + " has no " + symbol +
                                 " (driver too old?): " + (why != nullptr ? why : "null symbol"));
    }
    *fn = reinterpret_cast<Fn>(address);
    return Status::Ok();
  }

  std::string Error(const char* call, NvmlReturn code) const {
    const char* text = error_string_ != nullptr ? error_string_(code) : nullptr;
    return Printf("NVML %s for GPU %s: %s (NVML error %d)", call, device_.c_str(),
                  text != nullptr ? text : "unknown error", code);
  }

  const std::string device_;
  void* library_ = nullptr;
  bool initialized_ = false;  // nvmlInit_v2 succeeded: nvmlShutdown is owed
  NvmlDevice handle_ = nullptr;
  NvmlShutdownFn shutdown_ = nullptr;
  NvmlErrorStringFn error_string_ = nullptr;
  NvmlGetClockInfoFn get_clock_info_ = nullptr;
};

Result<std::unique_ptr<ClockSource>> NvmlClock::Open(const std::string& device) {
  const bool by_uuid = device.rfind("GPU-", 0) == 0 || device.rfind("MIG-", 0) == 0;
  const std::optional<unsigned int> index = by_uuid ? std::nullopt : ParseIndex(device);
  if (!by_uuid && !index) {
    return Status::InvalidInput("NVML device '" + device +
                                "': expected a UUID (GPU-...) or a decimal index");
  }
  // Owned from here on, so that every failure below shuts NVML down and unloads it.
  std::unique_ptr<NvmlClock> clock(new NvmlClock(device));
  // RTLD_LOCAL: NVML's symbols stay out of the global namespace, where a
  // framework loaded later (torch) may bring its own expectations of them.
  clock->library_ = dlopen(kNvmlLibrary, RTLD_NOW | RTLD_LOCAL);
  if (clock->library_ == nullptr) {
    const char* why = dlerror();
    return Status::NotFound(
        std::string("cannot load ") + kNvmlLibrary +
        " (NVML, part of the NVIDIA driver): " + (why != nullptr ? why : "dlopen failed"));
  }
  NvmlInitFn init = nullptr;
  NvmlGetHandleByUuidFn by_uuid_fn = nullptr;
  NvmlGetHandleByIndexFn by_index_fn = nullptr;
  for (Status bound :
       {clock->Bind("nvmlErrorString", &clock->error_string_), clock->Bind("nvmlInit_v2", &init),
        clock->Bind("nvmlShutdown", &clock->shutdown_),
        clock->Bind("nvmlDeviceGetHandleByUUID", &by_uuid_fn),
        clock->Bind("nvmlDeviceGetHandleByIndex_v2", &by_index_fn),
        clock->Bind("nvmlDeviceGetClockInfo", &clock->get_clock_info_)}) {
    if (!bound.ok()) return bound;
  }
  NvmlReturn code = init();
  if (code != kNvmlSuccess) return Status::IoError(clock->Error("nvmlInit_v2", code));
  clock->initialized_ = true;
  code =
      by_uuid ? by_uuid_fn(device.c_str(), &clock->handle_) : by_index_fn(*index, &clock->handle_);
  if (code != kNvmlSuccess) {
    std::string why =
        clock->Error(by_uuid ? "nvmlDeviceGetHandleByUUID" : "nvmlDeviceGetHandleByIndex_v2", code);
    if (code == kNvmlErrorNotFound || code == kNvmlErrorInvalidArgument) {
      return Status::NotFound(std::move(why));
    }
    return Status::IoError(std::move(why));
  }
  // One read now: a device whose clock cannot be read (some MIG and vGPU
  // setups) is reported when the benchmark starts, not as a warning at the end.
  Result<double> first = clock->ReadMhz();
  if (!first.ok()) return first.status();
  return std::unique_ptr<ClockSource>(std::move(clock));
}

class NpuSmiClock : public ClockSource {
 public:
  explicit NpuSmiClock(int index) : index_(index) {}
  std::string name() const override { return "npu-smi"; }
  std::string device() const override { return std::to_string(index_); }
  Result<double> ReadMhz() override {
    const std::string shown = Printf("npu-smi info -t common -i %d", index_);
    SpawnOptions options;
    options.argv = {"npu-smi", "info", "-t", "common", "-i", std::to_string(index_)};
    // Its own process group, stdin on /dev/null: whatever npu-smi started goes
    // with it on a timeout, and it never waits on our stdin.
    Result<CapturedRun> ran =
        RunAndCapture(options, kNpuSmiTimeoutS, kNpuSmiKillAfterS, kMaxCommandOutput);
    if (!ran.ok()) {
      if (ran.status().code() == Status::Code::kNotFound) {
        return Status::NotFound(Printf("`%s`: npu-smi not found (is the Ascend driver installed?): %s",
                                       shown.c_str(), ran.status().message().c_str()));
      }
      return ran.status();
    }
    const std::string& output = ran.value().output;
    if (ran.value().timed_out) {
      return Status::IoError(
          Printf("`%s` did not finish in %d s: killed", shown.c_str(), kNpuSmiTimeoutS));
    }
    const ExitStatus& status = ran.value().status;
    if (!status.exited) {
      return Status::IoError(Printf("`%s` was killed by %s", shown.c_str(), status.Describe().c_str()));
    }
    const int code = status.code;
    if (code != 0) {
      return Status::IoError(
          Printf("`%s` failed (exit code %d): %s", shown.c_str(), code, OneLine(output).c_str()));
    }
    const std::optional<double> mhz = ParseNpuSmiAicoreMhz(output);
    if (!mhz) {
      return Status::IoError(Printf("`%s` printed no \"Aicore curFreq(MHZ) : <number>\" line: %s",
                                    shown.c_str(), OneLine(output).c_str()));
    }
    return *mhz;
  }

 private:
  const int index_;
};

// What the clock is called in warnings, after the source that reads it.
std::string ClockLabel(const std::string& source) {
  if (source == "nvml") return "SM clock";
  if (source == "npu-smi") return "Aicore clock";
  return source + " clock";
}

}  // namespace

nlohmann::json ClockReport::ToJson() const {
  const auto optional = [](const std::optional<double>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  nlohmann::json sample_t_s = nlohmann::json::array();
  nlohmann::json sample_mhz = nlohmann::json::array();
  const std::size_t kept = std::min(series.size(), kMaxJsonSamples);
  for (std::size_t i = 0; i < kept; ++i) {
    // Evenly spaced over the whole run, the first and last sample included:
    // a throttling episode late in a long run still shows.
    const std::size_t at = kept == 1 ? 0 : i * (series.size() - 1) / (kept - 1);
    sample_t_s.push_back(std::round(series[at].t_s * 1000) / 1000);
    sample_mhz.push_back(series[at].mhz);
  }
  return nlohmann::json{{"source", source},
                        {"device", device},
                        {"baseline_mhz", optional(baseline_mhz)},
                        {"baseline_t_s", optional(baseline_t_s)},
                        {"min_mhz", min_mhz},
                        {"max_mhz", max_mhz},
                        {"samples", samples},
                        {"max_drift_fraction", max_drift_fraction},
                        {"warnings", warnings},
                        {"error", error},
                        {"sample_t_s", std::move(sample_t_s)},
                        {"sample_mhz", std::move(sample_mhz)}};
}

Result<std::unique_ptr<ClockSource>> OpenNvmlClock(const std::string& device) {
  return NvmlClock::Open(device);
}

Result<std::unique_ptr<ClockSource>> OpenNpuSmiClock(int index) {
  if (index < 0) return Status::InvalidInput(Printf("npu-smi device index %d: negative", index));
  auto clock = std::make_unique<NpuSmiClock>(index);
  Result<double> first = clock->ReadMhz();
  if (!first.ok()) return first.status();
  return std::unique_ptr<ClockSource>(std::move(clock));
}

std::optional<double> ParseNpuSmiAicoreMhz(const std::string& output) {
  // "Aicore curFreq" is the clock now; "Aicore Freq" beside it is the rated one.
  static constexpr char kKey[] = "Aicore curFreq(MHZ)";
  const std::size_t key = output.find(kKey);
  if (key == std::string::npos) return std::nullopt;
  std::size_t line_end = output.find('\n', key);
  if (line_end == std::string::npos) line_end = output.size();
  const std::size_t colon = output.find(':', key);
  if (colon == std::string::npos || colon > line_end) return std::nullopt;
  const std::string value = Trim(output.substr(colon + 1, line_end - colon - 1));
  // from_chars: a number whatever the process's locale (no decimal comma).
  double mhz = 0;
  const char* end = value.data() + value.size();
  const auto [stop, error] = std::from_chars(value.data(), end, mhz);
  if (value.empty() || error != std::errc() || stop != end || !std::isfinite(mhz) || mhz < 0) {
    return std::nullopt;  // "NA" where the chip does not report it
  }
  return mhz;
}

ClockMonitor::ClockMonitor(std::unique_ptr<ClockSource> source, double interval_s,
                           double drift_tolerance)
    : source_(std::move(source)),
      interval_s_(interval_s >= kMinIntervalS ? interval_s : kMinIntervalS),
      drift_tolerance_(drift_tolerance >= 0 ? drift_tolerance : 0) {}

ClockMonitor::~ClockMonitor() { StopThread(); }

double ClockMonitor::SecondsSinceStart() const {
  return std::chrono::duration<double>(SteadyClock::now() - start_time_).count();
}

void ClockMonitor::Start() {
  std::lock_guard<std::mutex> read_lock(read_mutex_);
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (thread_.joinable()) return;
  stop_ = false;
  started_ = true;
  start_time_ = SteadyClock::now();
  series_.clear();
  baseline_mhz_.reset();
  baseline_t_s_.reset();
  baseline_index_ = 0;
  baseline_error_.clear();
  first_read_error_.clear();
  failed_reads_ = 0;
  if (source_ != nullptr) thread_ = std::thread(&ClockMonitor::Run, this);
}

void ClockMonitor::Run() {
  const auto interval =
      std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(interval_s_));
  SteadyClock::time_point next;
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    next = start_time_;
  }
  for (;;) {
    {
      std::lock_guard<std::mutex> read_lock(read_mutex_);
      const double before = SecondsSinceStart();
      Result<double> mhz = source_->ReadMhz();
      // The middle of the read: npu-smi takes a good part of a second.
      const double t = (before + SecondsSinceStart()) / 2;
      std::lock_guard<std::mutex> lock(state_mutex_);
      if (mhz.ok()) {
        series_.push_back({t, mhz.value()});
      } else if (failed_reads_++ == 0) {
        first_read_error_ = Printf("at %.1f s: ", t) + mhz.status().message();
        spdlog::warn("clock monitor: reading the {} clock of device {} failed {}; sampling goes on",
                     source_->name(), source_->device(), first_read_error_);
      }
    }
    std::unique_lock<std::mutex> lock(state_mutex_);
    // A steady cadence from Start(); a read that overran its tick (npu-smi on
    // a short interval) moves the next one out rather than firing a burst.
    next += interval;
    const SteadyClock::time_point now = SteadyClock::now();
    if (next <= now) next = now + interval;
    if (wake_.wait_until(lock, next, [this] { return stop_; })) return;
  }
}

Status ClockMonitor::SetBaseline() {
  if (source_ == nullptr) return Status::Unsupported("clock monitor: no clock source to read");
  std::lock_guard<std::mutex> read_lock(read_mutex_);
  if (!started_) return Status::InvalidInput("clock monitor: SetBaseline() before Start()");
  const double before = SecondsSinceStart();
  Result<double> mhz = source_->ReadMhz();
  const double t = (before + SecondsSinceStart()) / 2;
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (!mhz.ok()) {
    if (baseline_error_.empty()) {
      baseline_error_ =
          Printf("reading the baseline clock at %.1f s failed: ", t) + mhz.status().message();
    }
    return mhz.status();
  }
  baseline_mhz_ = mhz.value();
  baseline_t_s_ = t;
  baseline_index_ = series_.size();
  return Status::Ok();
}

void ClockMonitor::StopThread() {
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

ClockReport ClockMonitor::Stop() {
  StopThread();
  std::lock_guard<std::mutex> lock(state_mutex_);
  ClockReport report;
  if (source_ == nullptr) {
    report.source = "none";
    report.error = "no device clock source was opened";
    return report;
  }
  report.source = source_->name();
  report.device = source_->device();
  if (!started_) {
    report.error = "the clock monitor was not started";
    return report;
  }
  report.series = series_;
  report.baseline_mhz = baseline_mhz_;
  report.baseline_t_s = baseline_t_s_;
  if (!baseline_error_.empty()) report.warnings.push_back(baseline_error_);
  if (series_.empty()) {
    report.error = "every read of the clock failed; the first " + first_read_error_;
    return report;
  }
  if (failed_reads_ > 0) {
    report.warnings.push_back(
        Printf("%lld of %lld clock reads failed; the first ", static_cast<long long>(failed_reads_),
               static_cast<long long>(failed_reads_) + static_cast<long long>(series_.size())) +
        first_read_error_);
  }

  const std::size_t from = baseline_mhz_ ? baseline_index_ : 0;
  const double baseline = baseline_mhz_.value_or(0);
  const bool measure_drift = baseline_mhz_ && baseline > 0;
  if (baseline_mhz_ && !measure_drift) {
    report.warnings.push_back(
        Printf("the baseline clock read %.0f MHz: drift not measured", baseline));
  }
  const std::string label = ClockLabel(report.source);
  std::size_t drifted = 0;
  for (std::size_t i = from; i < series_.size(); ++i) {
    const ClockSample& sample = series_[i];
    report.min_mhz = report.samples == 0 ? sample.mhz : std::min(report.min_mhz, sample.mhz);
    report.max_mhz = report.samples == 0 ? sample.mhz : std::max(report.max_mhz, sample.mhz);
    ++report.samples;
    if (!measure_drift) continue;
    const double drift = std::fabs(sample.mhz - baseline) / baseline;
    report.max_drift_fraction = std::max(report.max_drift_fraction, drift);
    if (drift <= drift_tolerance_) continue;
    if (++drifted <= kMaxDriftWarnings) {
      report.warnings.push_back(Printf(
          "%s %.0f MHz is %.1f%% %s the baseline %.0f MHz at %.1f s", label.c_str(), sample.mhz,
          drift * 100, sample.mhz < baseline ? "below" : "above", baseline, sample.t_s));
    }
  }
  if (drifted > kMaxDriftWarnings) {
    report.warnings.push_back(Printf("... and %zu more samples beyond %.1f%% of the baseline",
                                     drifted - kMaxDriftWarnings, drift_tolerance_ * 100));
  }
  return report;
}

}  // namespace opverify
