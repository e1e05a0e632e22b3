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
  // The rank's next spare starts once the timing is done, never beside it.
  RunOptions bench_options = options;
  if (bench_options.prestart != SparePrestart::kNever)
    bench_options.prestart = SparePrestart::kOnClose;
  OperatorSession session(spec, bench_options);
  CallResult loaded = session.Open();
  const int case_count = loaded.failure == CallFailure::kNone ? loaded.As<proto::LoadReply>().case_count : 0;
  auto skipped = [&](int i) { return spec.skip_case && spec.skip_case(i, ""); };
  auto fail_shape = [&](int index, const std::string& type, const std::string& message,
                        const json& input_descs = json::array()) {
    ShapeResult shape;
    shape.case_idx = index + 1;
    shape.input_desc = OperatorSession::InputDescAt(input_descs, index);
    shape.error_type = type;
    shape.error_msg = CutMiddle(message);
    out.shapes.push_back(std::move(shape));
  };
  if (!loaded.succeeded()) {
    session.Spoil();
    // case_count is known once the task loaded, even when the implementation did not.
    const json input_descs = case_count > 0 ? session.DescribeCases() : json::array();
    for (int i = 0; i < std::max(case_count, 1); ++i) {
      if (!skipped(i)) fail_shape(i, CallErrorType(loaded), "load: " + CallErrorMessage(loaded), input_descs);
    }
    return out;
  }
  CallResult environment = session.implementation()->Call(proto::EnvironmentRequest{}, spec.config.timeout_s);
  if (environment.succeeded()) out.environment = environment.As<proto::EnvironmentReply>().environment;
  std::unique_ptr<ClockMonitor> clock = open_clock ? open_clock(out.environment) : nullptr;
  if (clock) clock->Start();
  bool baseline_set = false;

  for (int i = 0; i < case_count; ++i) {
    if (skipped(i)) continue;
    if (!session.ready()) {
      CallResult reopened = session.Open();
      if (!reopened.succeeded()) {
        for (int j = i; j < case_count; ++j) {
          if (!skipped(j)) fail_shape(j, CallErrorType(reopened), "restarting the executor: " + CallErrorMessage(reopened));
        }
        break;
      }
    }
    ShapeResult shape;
    shape.case_idx = i + 1;
    // The framework is timed in the executor that never imports the
    // implementation (the trust boundary): nothing of the implementation's
    // can slow it or rewrite its numbers.
    ExecutorClient* implementation = session.implementation();
    ExecutorClient* reference = session.reference();
    const bool apart = reference != implementation;
    // A failure ends this shape; a device error or a dead executor also ends the executor.
    auto failed = [&](const CallResult& call, const std::string& stage) {
      std::optional<CallError> error = session.Failed(call);
      if (!error) return false;
      shape.error_type = error->type;
      shape.error_msg = CutMiddle(stage + ": " + error->message);
      spdlog::warn("{} [shape {}/{}] {}: {}", spec.name, i + 1, case_count, shape.error_type,
                   Utf8Prefix(shape.error_msg, 200));
      return true;
    };
    proto::BenchPrepareRequest prepare;
    prepare.index = i;
    prepare.seed = spec.config.seed;
    prepare.warmup = settings.warmup;
    prepare.flush_l2 = settings.flush_l2;
    prepare.skip_framework = settings.skip_framework;
    if (apart) prepare.skip_framework = true;
    CallResult prepared = implementation->Call(prepare, spec.config.timeout_s);
    if (apart && prepared.succeeded() && !settings.skip_framework) {
      proto::BenchPrepareRequest framework = prepare;
      framework.skip_framework = false;  // a reference executor prepares the framework alone
      prepared = reference->Call(framework, spec.config.timeout_s);
    }
    if (prepared.failure == CallFailure::kNone) {
      const auto reply = prepared.As<proto::BenchPrepareReply>();
      shape.input_desc = reply.input_desc;
      shape.input_dtypes = reply.input_dtypes;
      const std::optional<double> bandwidth_gbs = reply.memory_bandwidth_gbs;
      const std::optional<double> bytes = reply.bytes_moved;
      if (bandwidth_gbs && *bandwidth_gbs > 0 && bytes && *bytes > 0) {
        shape.roofline_ms = *bytes / (*bandwidth_gbs * 1e9) * 1e3;
      }
    }
    if (!failed(prepared, "preparing")) {
      // The clock the device runs at once warmed up is the one drift is measured from.
      if (clock && !baseline_set) {
        SetClockBaseline(*clock, spec.name);
        baseline_set = true;
      }
      bool ok = true;
      for (const char* side : {"framework", "implementation"}) {
        if (std::string(side) == "framework" && settings.skip_framework) continue;
        proto::BenchMeasureRequest measure;
        measure.side = side;
        measure.repeats = settings.repeats;
        measure.adaptive = settings.adaptive;
        measure.max_repeats = settings.max_repeats;
        measure.rse_target = settings.rse_target;
        measure.max_seconds = settings.max_seconds;
        measure.profile_iterations = settings.profile_iterations;
        ExecutorClient* timing = std::string(side) == "framework" ? reference : implementation;
        CallResult measured = timing->Call(measure, spec.config.timeout_s + settings.max_seconds);
        if (failed(measured, std::string("timing ") + side)) {
          ok = false;
          break;
        }
        const auto reply = measured.As<proto::BenchMeasureReply>();
        (std::string(side) == "framework" ? shape.framework : shape.implementation) = ReadSide(reply);
        shape.warnings.insert(shape.warnings.end(), reply.warnings.begin(), reply.warnings.end());
      }
      if (ok) {
        shape.passed = true;
        std::optional<double> framework_ms = settings.skip_framework ? settings.framework_latency_ms
                                                                     : shape.framework.latency_ms;
        if (framework_ms && shape.implementation.latency_ms) {
          // 0/0 and x/0 stay what IEEE makes of them: the anomaly classes sort them out.
          shape.speedup = *framework_ms / *shape.implementation.latency_ms;
        }
        if (shape.roofline_ms && shape.implementation.latency_ms && *shape.implementation.latency_ms < *shape.roofline_ms) {
          shape.above_roofline = true;
          shape.warnings.push_back("implementation " + std::to_string(*shape.implementation.latency_ms * 1e3) +
                                   " us is faster than the device's memory roofline (" +
                                   std::to_string(*shape.roofline_ms * 1e3) +
                                   " us to read the inputs and write the outputs once at peak bandwidth): it "
                                   "cannot have done the work it claims; review it");
        }
        if (shape.speedup && std::isfinite(*shape.speedup) && *shape.speedup > settings.review_speedup) {
          shape.warnings.push_back("speedup " + std::to_string(*shape.speedup) + "x is above " +
                                   std::to_string(settings.review_speedup) + "x: review it before believing it");
        }
      }
      for (ExecutorClient* executor : {implementation, apart ? reference : nullptr}) {
        if (executor != nullptr && executor->alive()) executor->Call(proto::BenchReleaseRequest{}, spec.config.timeout_s);
      }
    }
    spdlog::info("{} [shape {}/{}] {}: framework {} ms, implementation {} ms, speedup {}", spec.name, i + 1,
                 case_count, shape.passed ? "measured" : shape.error_type,
                 shape.framework.latency_ms ? std::to_string(*shape.framework.latency_ms) : "-",
                 shape.implementation.latency_ms ? std::to_string(*shape.implementation.latency_ms) : "-",
                 shape.speedup ? std::to_string(*shape.speedup) : "-");
    out.shapes.push_back(std::move(shape));
  }
  if (clock) out.clock = clock->Stop().ToJson();
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace opverify
