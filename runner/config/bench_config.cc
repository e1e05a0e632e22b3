#include "runner/config/bench_config.h"

namespace opverify {

using nlohmann::json;

BenchConfig BenchConfig::ForManifest() {
  BenchConfig config;
  config.max_repeats = 1000;
  return config;
}

json BenchConfig::ToJson() const {
  json out = {{"warmup", warmup},
              {"repeats", repeats},
              {"adaptive", adaptive},
              {"max_repeats", max_repeats > 0 ? max_repeats : repeats * 20},
              {"rse_target", rse_target},
              {"max_seconds", max_seconds},
              {"flush_l2", flush_l2},
              {"profile_iterations", profile_iterations},
              {"skip_framework", skip_framework},
              {"review_speedup", review_speedup}};
  out["framework_latency_ms"] = framework_latency_ms ? json(*framework_latency_ms) : json(nullptr);
  return out;
}

BenchConfig BenchConfig::FromJson(const json& j) {
  BenchConfig s;
  if (!j.is_object()) return s;
  s.warmup = j.value("warmup", s.warmup);
  s.repeats = j.value("repeats", s.repeats);
  s.adaptive = j.value("adaptive", s.adaptive);
  s.max_repeats = j.value("max_repeats", s.max_repeats);
  s.rse_target = j.value("rse_target", s.rse_target);
  s.max_seconds = j.value("max_seconds", s.max_seconds);
  s.flush_l2 = j.value("flush_l2", s.flush_l2);
  s.profile_iterations = j.value("profile_iterations", s.profile_iterations);
  s.skip_framework = j.value("skip_framework", s.skip_framework);
  if (j.contains("framework_latency_ms") && j["framework_latency_ms"].is_number()) {
    s.framework_latency_ms = j["framework_latency_ms"].get<double>();
  }
  s.review_speedup = j.value("review_speedup", s.review_speedup);
  return s;
}

Status ApplyManifestBench(const json& bench, const std::string& where, BenchConfig* config) {
  config->warmup = bench.value("warmup", config->warmup);
  config->repeats = bench.value("repeats", config->repeats);
  config->enabled = bench.value("enabled", config->enabled);
  config->adaptive = bench.value("adaptive", config->adaptive);
  config->rse_target = bench.value("target_rse", config->rse_target);
  config->max_repeats = bench.value("max_repeats", config->max_repeats);
  if (config->adaptive && config->max_repeats < config->repeats) {
    return Status::InvalidInput(where + ": bench.max_repeats (" + std::to_string(config->max_repeats) +
                                ") is below bench.repeats (" + std::to_string(config->repeats) + ")");
  }
  return Status::Ok();
}

}  // namespace opverify
