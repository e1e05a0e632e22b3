// `opverify verify --seed-compat`: verify as the seed's verify.py behaves
// (docs/SEED_COMPAT.md): no lint, one input seed, --timeout for the whole
// run, AssertionError for the three pre-check failures, the seed's log lines.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "runner/config/operator_config.h"
#include "runner/verify/operator_run.h"

namespace opverify {

// The settings the seed's verify.py has: lint and runtime evidence off, one
// input seed (the base seed).
void ApplySeedSettings(OperatorConfig* config);

// The seed's name for an error type: ShapeMismatch, NaNMismatch and
// InfMismatch are its AssertionError; every other type is unchanged.
std::string SeedErrorType(const std::string& error_type);

// The seed's log lines for a finished case, on stdout: per output the
// route it took (`[评测模式] ...`), the golden's fallback to the device
// (`[用例 i/n] golden 落 CPU 时执行失败,回退 golden 到 NPU 重试: ...`), the verdict.
void PrintSeedCaseLines(const CaseOutcome& c);

// The seed's whole-run timeout: from construction, `seconds` later it sets
// the run's stop flag (the call in flight is abandoned, its executor killed).
class RunDeadline {
 public:
  explicit RunDeadline(double seconds);
  ~RunDeadline();
  RunDeadline(const RunDeadline&) = delete;
  RunDeadline& operator=(const RunDeadline&) = delete;

  const std::atomic<int>* stop() const { return &stop_; }
  bool expired() const { return stop_.load() != 0; }

 private:
  std::atomic<int> stop_{0};
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  std::thread watch_;
};

}  // namespace opverify
