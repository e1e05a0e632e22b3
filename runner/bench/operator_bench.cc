#include "runner/bench/operator_bench.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdlib>

#include "runner/verify/executor_session.h"

namespace opverify {

using nlohmann::json;
namespace proto = executor_protocol;

namespace {

std::optional<double> OptionalNumber(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return std::nullopt;
  return object[key].get<double>();
}

SideResult ReadSide(const proto::BenchMeasureReply& reply) {
  SideResult side;
  side.measured = true;
  side.stats = reply.stats;
  side.latency_ms = OptionalNumber(side.stats, "median_ms");
  side.peak_memory_mb = reply.peak_memory_mb;
  side.added_memory_mb = reply.added_memory_mb;
  if (reply.operators.is_object()) side.operators = reply.operators;
  return side;
}

// The clock now is the one drift is measured from. A failed read is already
// among the clock report's warnings: logged here for the debug log alone.
void SetClockBaseline(ClockMonitor& clock, const std::string& op_name) {
  if (const Status read = clock.SetBaseline(); !read.ok())
    spdlog::debug("{}: the clock's baseline: {}", op_name, read.message());
}

// A measured shape's speedup over the framework, and the warnings a person
// should read before believing it: faster than the memory roofline, or a
// speedup above settings.review_speedup.
void AssessSpeed(const BenchConfig& settings, ShapeResult* shape) {
  std::optional<double> framework_ms =
      settings.skip_framework ? settings.framework_latency_ms : shape->framework.latency_ms;
  const std::optional<double> implementation_ms = shape->implementation.latency_ms;
  if (framework_ms && implementation_ms) {
    // 0/0 and x/0 stay what IEEE makes of them: the anomaly classes sort them out.
    shape->speedup = *framework_ms / *implementation_ms;
  }
  if (shape->roofline_ms && implementation_ms && *implementation_ms < *shape->roofline_ms) {
    shape->above_roofline = true;
    shape->warnings.push_back(
        "implementation " + std::to_string(*implementation_ms * 1e3) +
        " us is faster than the device's memory roofline (" +
        std::to_string(*shape->roofline_ms * 1e3) +
        " us to read the inputs and write the outputs once at peak bandwidth): it "
        "cannot have done the work it claims; review it");
  }
  if (shape->speedup && std::isfinite(*shape->speedup) &&
      *shape->speedup > settings.review_speedup) {
    shape->warnings.push_back("speedup " + std::to_string(*shape->speedup) + "x is above " +
                              std::to_string(settings.review_speedup) +
                              "x: review it before believing it");
  }
}

// The measure request of one side ("framework" or "implementation").
proto::BenchMeasureRequest MeasureRequest(const BenchConfig& settings, const char* side) {
  proto::BenchMeasureRequest measure;
  measure.side = side;
  measure.timing = settings.timing;
  return measure;
}

// The rank's next spare starts once the timing is done, never beside it.
RunOptions BenchRunOptions(const RunOptions& options) {
  RunOptions bench_options = options;
  if (bench_options.prestart != SparePrestart::kNever)
    bench_options.prestart = SparePrestart::kOnClose;
  return bench_options;
}

// One operator's benchmark, step by step: load it (a failed load fails
// every shape), ask its environment and start watching the clock, then
// prepare, time and release each shape, restarting the executor after a
// shape that ended it.
class OperatorBench {
 public:
  OperatorBench(const OperatorSpec& spec, const RunOptions& options, const BenchConfig& settings,
                OperatorBenchResult* out)
      : spec_(spec),
        settings_(settings),
        options_(BenchRunOptions(options)),
        session_(spec, options_),
        out_(*out) {}

  // false: every shape failed with the load's error.
  bool Load();
  void StartClock(const ClockOpener& open_clock);
  void BenchShapes();
  void StopClock() {
    if (clock_) out_.clock = clock_->Stop().ToJson();
  }

 private:
  bool Skipped(int i) const { return spec_.skip_case && spec_.skip_case(i, ""); }
  void FailShape(int index, const std::string& type, const std::string& message,
                 const json& input_descs = json::array());
  ShapeResult BenchShape(int i);
  // false: a failure ends this shape; a device error or a dead executor also ends the executor.
  bool Check(const CallResult& call, const std::string& stage, ShapeResult* shape);
  // Each executor prepares the shape's inputs; the prepared call (the last one made).
  CallResult Prepare(int i, ShapeResult* shape);
  // Times each side; false when one failed.
  bool Measure(ShapeResult* shape);

  const OperatorSpec& spec_;
  const BenchConfig& settings_;
  const RunOptions options_;
  OperatorSession session_;
  OperatorBenchResult& out_;
  int case_count_ = 0;
  std::unique_ptr<ClockMonitor> clock_;
  bool baseline_set_ = false;
};

bool OperatorBench::Load() {
  CallResult loaded = session_.Open();
  case_count_ = loaded.failure == CallFailure::kNone ? loaded.As<proto::LoadReply>().case_count : 0;
  if (loaded.succeeded()) return true;
  session_.Spoil();
  // case_count is known once the task loaded, even when the implementation did not.
  const json input_descs = case_count_ > 0 ? session_.DescribeCases() : json::array();
  for (int i = 0; i < std::max(case_count_, 1); ++i) {
    if (!Skipped(i))
      FailShape(i, CallErrorType(loaded), "load: " + CallErrorMessage(loaded), input_descs);
  }
  return false;
}

void OperatorBench::StartClock(const ClockOpener& open_clock) {
  out_.environment = session_.Environment();
  clock_ = open_clock ? open_clock(out_.environment) : nullptr;
  if (clock_) clock_->Start();
}

void OperatorBench::BenchShapes() {
  for (int i = 0; i < case_count_; ++i) {
    if (Skipped(i)) continue;
    if (std::optional<CallError> restart = session_.Reopen()) {
      for (int j = i; j < case_count_; ++j) {
        if (!Skipped(j)) FailShape(j, restart->type, restart->message);
      }
      break;
    }
    out_.shapes.push_back(BenchShape(i));
  }
}

void OperatorBench::FailShape(int index, const std::string& type, const std::string& message,
                              const json& input_descs) {
  ShapeResult shape;
  shape.case_idx = index + 1;
  shape.input_desc = OperatorSession::InputDescAt(input_descs, index);
  shape.error_type = type;
  shape.error_msg = CutMiddle(message);
  out_.shapes.push_back(std::move(shape));
}

ShapeResult OperatorBench::BenchShape(int i) {
  ShapeResult shape;
  shape.case_idx = i + 1;
  if (Check(Prepare(i, &shape), "preparing", &shape)) {
    // The clock the device runs at once warmed up is the one drift is measured from.
    if (clock_ && !baseline_set_) {
      SetClockBaseline(*clock_, spec_.name);
      baseline_set_ = true;
    }
    if (Measure(&shape)) {
      shape.passed = true;
      AssessSpeed(settings_, &shape);
    }
    ExecutorClient* reference = session_.reference();
    ExecutorClient* implementation = session_.implementation();
    for (ExecutorClient* executor :
         {implementation, reference != implementation ? reference : nullptr}) {
      if (executor != nullptr && executor->alive())
        executor->Call(proto::BenchReleaseRequest{}, spec_.config.timeout_s);
    }
  }
  spdlog::info(
      "{} [shape {}/{}] {}: framework {} ms, implementation {} ms, speedup {}", spec_.name, i + 1,
      case_count_, shape.passed ? "measured" : shape.error_type,
      shape.framework.latency_ms ? std::to_string(*shape.framework.latency_ms) : "-",
      shape.implementation.latency_ms ? std::to_string(*shape.implementation.latency_ms) : "-",
      shape.speedup ? std::to_string(*shape.speedup) : "-");
  return shape;
}

bool OperatorBench::Check(const CallResult& call, const std::string& stage, ShapeResult* shape) {
  std::optional<CallError> error = session_.Failed(call);
  if (!error) return true;
  shape->error_type = error->type;
  shape->error_msg = CutMiddle(stage + ": " + error->message);
  spdlog::warn("{} [shape {}/{}] {}: {}", spec_.name, shape->case_idx, case_count_,
               shape->error_type, Utf8Prefix(shape->error_msg, 200));
  return false;
}

CallResult OperatorBench::Prepare(int i, ShapeResult* shape) {
  // The framework is timed in the executor that never imports the
  // implementation (the trust boundary): nothing of the implementation's
  // can slow it or rewrite its numbers.
  ExecutorClient* implementation = session_.implementation();
  ExecutorClient* reference = session_.reference();
  const bool apart = reference != implementation;
  proto::BenchPrepareRequest prepare;
  prepare.index = i;
  prepare.seed = spec_.config.seed;
  prepare.warmup = settings_.warmup;
  prepare.flush_l2 = settings_.flush_l2;
  prepare.skip_framework = settings_.skip_framework || apart;
  CallResult prepared = implementation->Call(prepare, spec_.config.timeout_s);
  if (apart && prepared.succeeded() && !settings_.skip_framework) {
    proto::BenchPrepareRequest framework = prepare;
    framework.skip_framework = false;  // a reference executor prepares the framework alone
    prepared = reference->Call(framework, spec_.config.timeout_s);
  }
  if (prepared.failure == CallFailure::kNone) {
    const auto reply = prepared.As<proto::BenchPrepareReply>();
    shape->input_desc = reply.input_desc;
    shape->input_dtypes = reply.input_dtypes;
    const std::optional<double> bandwidth_gbs = reply.memory_bandwidth_gbs;
    const std::optional<double> bytes = reply.bytes_moved;
    if (bandwidth_gbs && *bandwidth_gbs > 0 && bytes && *bytes > 0) {
      shape->roofline_ms = *bytes / (*bandwidth_gbs * 1e9) * 1e3;
    }
  }
  return prepared;
}

bool OperatorBench::Measure(ShapeResult* shape) {
  for (const char* side : {"framework", "implementation"}) {
    const bool framework = std::string(side) == "framework";
    if (framework && settings_.skip_framework) continue;
    ExecutorClient* timing = framework ? session_.reference() : session_.implementation();
    // While the framework is timed, the implementation's executor and every process it left
    // running are stopped: none can take the cores (or the device) from the framework's clock.
    ExecutorClient* held = framework && session_.implementation() != timing ? session_.implementation() : nullptr;
    if (held != nullptr) held->Hold(true);
    CallResult measured = timing->Call(MeasureRequest(settings_, side),
                                       spec_.config.timeout_s + settings_.timing.max_seconds);
    if (held != nullptr) held->Hold(false);
    if (!Check(measured, std::string("timing ") + side, shape)) return false;
    const auto reply = measured.As<proto::BenchMeasureReply>();
    (framework ? shape->framework : shape->implementation) = ReadSide(reply);
    shape->warnings.insert(shape->warnings.end(), reply.warnings.begin(), reply.warnings.end());
  }
  return true;
}

}  // namespace

ClockOpener DeviceClockOpener(double interval_s, double drift_tolerance) {
  return [interval_s, drift_tolerance](const json& environment) -> std::unique_ptr<ClockMonitor> {
    if (interval_s <= 0 || !environment.is_object() || !environment.contains("device")) return nullptr;
    const json& device = environment["device"];
    if (!device.is_object()) return nullptr;
    const std::string backend = device.value("backend", "");
    Result<std::unique_ptr<ClockSource>> source = Status::InvalidInput("no clock on backend " + backend);
    if (backend == "cuda") {
      // By UUID: the executor's device 0 is whichever GPU CUDA_VISIBLE_DEVICES named.
      std::string id = device.value("uuid", "");
      if (id.empty()) id = "0";
      source = OpenNvmlClock(id);
    } else if (backend == "npu") {
      int index = 0;
      const json& visible = device.contains("ASCEND_RT_VISIBLE_DEVICES") ? device["ASCEND_RT_VISIBLE_DEVICES"]
                                                                          : json(nullptr);
      if (visible.is_string() && !visible.get<std::string>().empty()) index = std::atoi(visible.get<std::string>().c_str());
      source = OpenNpuSmiClock(index);
    } else {
      return nullptr;
    }
    if (!source.ok()) {
      spdlog::warn("device clock not monitored: {}", source.status().ToString());
      return nullptr;
    }
    return std::make_unique<ClockMonitor>(std::move(source).value(), interval_s, drift_tolerance);
  };
}

OperatorBenchResult BenchOperator(const OperatorSpec& spec, const RunOptions& options, const BenchConfig& settings,
                                  const ClockOpener& open_clock) {
  const auto started = std::chrono::steady_clock::now();
  OperatorBenchResult out;
  out.op_name = spec.name;
  OperatorBench bench(spec, options, settings, &out);
  if (!bench.Load()) return out;
  bench.StartClock(open_clock);
  bench.BenchShapes();
  bench.StopClock();
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace opverify
