// How one operator is benchmarked: the one home of these settings and their
// defaults. A manifest entry's "bench" object (runner/manifest) and
// `opverify bench`'s flags (runner/cli/bench_command.cc) fill this struct;
// the benchmark loop (runner/bench/operator_bench.h) reads it, and the batch
// stores it with each benchmarked item (ToJson) for the reducer (FromJson).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "runner/common/status.h"
#include "runner/executor/measure_settings.h"

namespace opverify {

struct BenchConfig {
  bool enabled = true;  // false: the batch leaves the operator out of its performance phase
  int warmup = 5;
  // How each side is timed (repeats, adaptive and its caps, the profile), as
  // the executor's measure request carries it.
  MeasureSettings timing;
  bool flush_l2 = true;
  bool skip_framework = false;  // with framework_latency_ms: the framework's latency is given
  std::optional<double> framework_latency_ms;
  double review_speedup = 10;   // a speedup above this is flagged for review

  // The defaults of a manifest entry: as above, but adaptive's cap is 1000
  // (docs/MANIFEST.md), where `opverify bench` keeps 20 x --repeats.
  static BenchConfig ForManifest();

  // The stored record (the batch's benchmark item): max_repeats written as
  // the cap in effect. Keys as the fields' names.
  nlohmann::json ToJson() const;
  static BenchConfig FromJson(const nlohmann::json& json);
};

// A manifest entry's "bench" object over `config`: each key that is present
// replaces its field. Keys: enabled, warmup, repeats, adaptive, target_rse
// (rse_target), max_repeats. InvalidInput, naming `where`, when adaptive's
// cap is below repeats.
Status ApplyManifestBench(const nlohmann::json& bench, const std::string& where, BenchConfig* config);

}  // namespace opverify
