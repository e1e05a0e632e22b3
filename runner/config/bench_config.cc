#include "runner/config/bench_config.h"

namespace opverify {

using nlohmann::json;

BenchConfig BenchConfig::ForManifest() {
  BenchConfig config;
  config.timing.max_repeats = 1000;
  return config;
}

json BenchConfig::ToJson() const {
  json out = {{"warmup", warmup},
              {"repeats", timing.repeats},
              {"adaptive", timing.adaptive},
              {"max_repeats", timing.max_repeats > 0 ? timing.max_repeats : timing.repeats * 20},
              {"rse_target", timing.rse_target},
              {"max_seconds", timing.max_seconds},
              {"flush_l2", flush_l2},
              {"profile_iterations", timing.profile_iterations},
              {"skip_framework", skip_framework},
              {"review_speedup", review_speedup}};
  out["framework_latency_ms"] = framework_latency_ms ? json(*framework_latency_ms) : json(nullptr);
  return out;
}

BenchConfig BenchConfig::FromJson(const json& j) {
  BenchConfig s;
  if (!j.is_object()) return s;
  s.warmup = j.value("warmup", s.warmup);
  s.timing.repeats = j.value("repeats", s.timing.repeats);
  s.timing.adaptive = j.value("adaptive", s.timing.adaptive);
  s.timing.max_repeats = j.value("max_repeats", s.timing.max_repeats);
  s.timing.rse_target = j.value("rse_target", s.timing.rse_target);
  s.timing.max_seconds = j.value("max_seconds", s.timing.max_seconds);
  s.flush_l2 = j.value("flush_l2", s.flush_l2);
  s.timing.profile_iterations = j.value("profile_iterations", s.timing.profile_iterations);
  s.skip_framework = j.value("skip_framework", s.skip_framework);
  if (j.contains("framework_latency_ms") && j["framework_latency_ms"].is_number()) {
    s.framework_latency_ms = j["framework_latency_ms"].get<double>();
  }
  s.review_speedup = j.value("review_speedup", s.review_speedup);
  return s;
}

Status ApplyManifestBench(const json& bench, const std::string& where, BenchConfig* config) {
  config->warmup = bench.value("warmup", config->warmup);
  config->timing.repeats = bench.value("repeats", config->timing.repeats);
  config->enabled = bench.value("enabled", config->enabled);
  config->timing.adaptive = bench.value("adaptive", config->timing.adaptive);
  config->timing.rse_target = bench.value("target_rse", config->timing.rse_target);
  config->timing.max_repeats = bench.value("max_repeats", config->timing.max_repeats);
  if (config->timing.adaptive && config->timing.max_repeats < config->timing.repeats) {
    return Status::InvalidInput(
        where + ": bench.max_repeats (" + std::to_string(config->timing.max_repeats) +
        ") is below bench.repeats (" + std::to_string(config->timing.repeats) + ")");
  }
  return Status::Ok();
}

}  // namespace opverify
