#include "runner/cli/seed_compat.h"

#include <chrono>
#include <cstdio>

#include "runner/common/failure_type.h"
#include "runner/judge/judge.h"

namespace opverify {

void ApplySeedSettings(OperatorConfig* config) {
  config->lint = false;
  config->runtime_checks = false;
  config->seeds = 1;
}

std::string SeedErrorType(const std::string& error_type) {
  switch (FailureType::FromText(error_type).kind()) {
    case FailureKind::kShapeMismatch:
    case FailureKind::kNaNMismatch:
    case FailureKind::kInfMismatch:
      return std::string(FailureKindName(FailureKind::kAssertionError));
    default:
      break;
  }
  return error_type;
}

namespace {

// The route an output took, as the seed names it. The seed's documents quote
// the eco, fallback, float_compute and non_compute lines; the other
// categories are named after its decision matrix (SKILL.md 2.1).
std::string RouteLine(const Verdict& v) {
  const std::string dtype(DTypeName(v.dtype));
  switch (v.route) {
    case Route::kEco:
      return "模式=eco_open_source(生态开源精度标准,第一标准),dtype=" + dtype;
    case Route::kNpuBenchmark:
      if (v.options.standard == Standard::kEco) {
        return "生态标准阈值表未覆盖 dtype=" + dtype + ",回退 NPU Benchmark 三项判定";
      }
      return "模式=float_compute(浮点计算类),NPU Benchmark 三项判定,dtype=" + dtype;
    case Route::kBitwise:
      return "模式=non_compute(非计算类),二进制完全一致,dtype=" + dtype;
    case Route::kQuant:
      return "模式=quant_compute(量化计算类),|diff| <= 1,dtype=" + dtype;
    case Route::kExact:
      if (v.dtype == DType::kBool) return "模式=bool(bool 输出),torch.equal 严格相等";
      return "模式=int_compute(整数计算类),|diff| == 0,dtype=" + dtype;
    case Route::kMereMare:
      return "模式=mere_mare(MERE/MARE),dtype=" + dtype;
    case Route::kStrict:
      return "模式=strict(生态开源精度标准 + MERE/MARE),dtype=" + dtype;
  }
  return "模式=" + std::string(RouteName(v.route));
}

// The first line of `text`, at most 300 bytes (whole UTF-8 characters).
std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() <= 300) return line;
  std::size_t cut = 300;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  return line.substr(0, cut) + "...";
}

}  // namespace

void PrintSeedCaseLines(const CaseOutcome& c) {
  const int i = c.index + 1;
  for (const Verdict& v : c.outputs) std::printf("[评测模式] %s\n", RouteLine(v).c_str());
  if (c.fallback_reason) {
    std::printf("[用例 %d/%d] golden 落 CPU 时执行失败,回退 golden 到 NPU 重试: %s\n", i,
                c.case_count, FirstLine(*c.fallback_reason).c_str());
  }
  if (c.passed) {
    std::printf("[用例 %d/%d] 通过\n", i, c.case_count);
  } else {
    std::printf("[用例 %d/%d] 失败: %s: %s\n", i, c.case_count, SeedErrorType(c.error_type).c_str(),
                FirstLine(c.error_msg).c_str());
  }
  std::fflush(stdout);
}

RunDeadline::RunDeadline(double seconds) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(seconds));
  watch_ = std::thread([this, deadline] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!done_.wait_until(lock, deadline, [this] { return finished_; })) stop_.store(1);
  });
}

RunDeadline::~RunDeadline() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
  }
  done_.notify_all();
  watch_.join();
}

}  // namespace opverify
