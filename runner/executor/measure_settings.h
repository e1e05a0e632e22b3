// How one side of a benchmark's prepared case is timed: the settings an
// operator's BenchConfig (runner/config/bench_config.h) holds and the
// executor's measure request (protocol.h's BenchMeasureRequest) carries, one
// struct in both so that the request takes them in one assignment.
#pragma once

namespace opverify {

struct MeasureSettings {
  int repeats = 50;
  bool adaptive = false;  // more repeats until the relative standard error is under rse_target
  int max_repeats =
      0;  // adaptive's cap; 0: the executor's rule, 20 x repeats (left out of the message)
  double rse_target = 0.01;
  double max_seconds = 60;      // adaptive's time cap per side and shape
  int profile_iterations = 10;  // for the per-kernel breakdown (0: none)
};

}  // namespace opverify
