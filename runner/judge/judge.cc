#include "runner/judge/judge.h"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include "runner/common/strings.h"
#include "runner/judge/element_reader.h"
#include "runner/judge/float_format.h"
#include "runner/judge/judge_kernel.h"

namespace opverify {
namespace {

constexpr std::int64_t kBlock = ElementReader::kMaxRun;
// Below this many elements one thread is faster than starting several.
constexpr std::int64_t kParallelThreshold = std::int64_t{1} << 20;

using kernel::FloatRules;
using kernel::RunStats;
using kernel::Storage;

// The kernel rules of one output: thresholds from the output's dtype (complex
// included), ULP from the format of the values judged (a complex part's).
struct OutputRules {
  bool has_eco = false;
  EcoThresholds eco{};
  NpuThresholds npu{};
  FloatRules kernel{};
};

OutputRules MakeRules(DType output_dtype, DType part_dtype, PrecisionMode mode) {
  OutputRules rules;
  if (auto eco = EcoThresholdsFor(output_dtype, mode)) {
    rules.has_eco = true;
    rules.eco = *eco;
  }
  rules.npu = NpuThresholdsFor(output_dtype, mode);
  const FloatFormat& format = FormatOf(part_dtype);
  const int min_exp = 1 - format.bias;
  FloatRules& k = rules.kernel;
  k.eco_atol = rules.eco.atol;
  k.eco_rtol = rules.eco.rtol;
  k.eco_limit = rules.eco.max_abs_error_limit;
  k.ulp32_subnormal = kEcoUlpFactor * std::ldexp(1.0, min_exp - format.mantissa_bits);
  k.ulp32_exponent_shift = static_cast<std::int64_t>(format.mantissa_bits - 5) * (std::int64_t{1} << 52);
  k.svt = rules.npu.small_value_threshold;
  k.sve = rules.npu.small_value_error;
  k.rel = rules.npu.rel_threshold;
  k.cap_atol = rules.npu.cap_atol;
  k.cap_rtol = rules.npu.cap_rtol;
  k.mm_threshold = MereMareThresholdFor(output_dtype, mode);
  return rules;
}

// The kernel that reads this dtype's storage directly, if there is one.
std::optional<Storage> DirectStorage(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return Storage::kFloat64;
    case DType::kFloat32:
      return Storage::kFloat32;
    case DType::kFloat16:
      return Storage::kFloat16;
    case DType::kBFloat16:
      return Storage::kBFloat16;
    default:
      return std::nullopt;
  }
}

// d / max(|G|, T): the mere_mare relative error, also the worst-element score.
inline double MereMareRel(double golden, double actual, double threshold) {
  const double magnitude = std::fabs(golden);
  return std::fabs(actual - golden) / (magnitude > threshold ? magnitude : threshold);
}

struct Candidate {
  double score = 0;
  std::int64_t index = 0;
  double golden = 0;
  double actual = 0;
};

// Better: larger score, then smaller index.
bool Better(const Candidate& a, const Candidate& b) {
  return a.score != b.score ? a.score > b.score : a.index < b.index;
}

// The k best candidates seen, kept as a heap whose top is the least good.
class WorstKeeper {
 public:
  explicit WorstKeeper(int k) : k_(static_cast<std::size_t>(std::max(k, 0))) {}
  // A score must exceed this to be kept (elements arrive in index order).
  double Threshold() const { return heap_.size() < k_ ? 0.0 : heap_.front().score; }
  void Offer(const Candidate& c) {
    if (k_ == 0 || c.score <= 0) return;
    if (heap_.size() < k_) {
      heap_.push_back(c);
      std::push_heap(heap_.begin(), heap_.end(), Better);
    } else if (Better(c, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), Better);
      heap_.back() = c;
      std::push_heap(heap_.begin(), heap_.end(), Better);
    }
  }
  const std::vector<Candidate>& items() const { return heap_; }

 private:
  std::size_t k_;
  std::vector<Candidate> heap_;
};

void RecordFirst(std::vector<Candidate>* list, std::size_t k, std::int64_t index, double golden,
                 double actual) {
  if (list->size() < k) list->push_back({1.0, index, golden, actual});
}

// What one thread learns about its share of one real-valued part.
struct PartAccumulator {
  explicit PartAccumulator(int k) : worst(k) {}
  std::int64_t finite = 0, nan_count = 0, inf_count = 0;
  std::int64_t nan_mismatch = 0, inf_mismatch = 0, bit_mismatch = 0, discrete_violations = 0;
  std::int64_t eco_matched = 0, eco_over = 0, npu_small = 0, npu_matched = 0, cap = 0;
  double mm_max = 0, max_abs = 0, max_rel = 0;
  WorstKeeper worst;
  std::vector<Candidate> first_mask_mismatches;
  std::vector<Candidate> first_bit_mismatches;

  void Add(const RunStats& s, std::int64_t finite_in_run) {
    finite += finite_in_run;
    eco_matched += s.eco_matched;
    eco_over += s.eco_over;
    npu_small += s.npu_small;
    npu_matched += s.npu_matched;
    cap += s.cap_violations;
    mm_max = std::max(mm_max, s.mm_rel_max);
    max_abs = std::max(max_abs, s.max_abs);
    max_rel = std::max(max_rel, s.max_rel);
  }
};

// One real-valued golden/actual pair to judge (a whole tensor or a complex part).
struct PartJob {
  const TensorView* golden;
  const TensorView* actual;
  DType as;  // the golden's dtype: the actual is cast to it
  Route route;
  bool bitwise;
  OutputRules rules;
  std::size_t k;
  std::vector<std::array<double, 2>>* block_sums;  // [block] = {npu rel sum, mm rel sum}
};

// Compares bits of [start, start + n) and records mismatches.
void CompareBits(ElementReader& g, ElementReader& a, const PartJob& job, std::int64_t start,
                 std::int64_t n, const double* gvals, const double* avals, PartAccumulator* acc) {
  std::array<std::uint64_t, kBlock> gbits, abits;
  g.ReadBits(start, n, job.as, gbits.data());
  a.ReadBits(start, n, job.as, abits.data());
  for (std::int64_t i = 0; i < n; ++i) {
    if (gbits[i] != abits[i]) {
      ++acc->bit_mismatch;
      RecordFirst(&acc->first_bit_mismatches, job.k, start + i, gvals[i], avals[i]);
    }
  }
}

// Runs the double kernel over n decoded pairs, padding with zero pairs.
RunStats RunDoubles(double* g, double* a, std::int64_t n, const FloatRules& rules) {
  const std::int64_t padded = (n + 3) / 4 * 4;
  std::fill(g + n, g + padded, 0.0);
  std::fill(a + n, a + padded, 0.0);
  RunStats stats = kernel::Kernels().run[static_cast<int>(Storage::kFloat64)](g, a, padded, rules);
  kernel::RemovePadding(&stats, padded - n);
  return stats;
}

void JudgeFloatBlocks(const PartJob& job, std::int64_t first_block, std::int64_t end_block,
                      PartAccumulator* acc) {
  const std::int64_t total = job.golden->NumElements();
  const FloatRules& rules = job.rules.kernel;
  ElementReader g_reader(*job.golden), a_reader(*job.actual);
  // Whole blocks of C-contiguous storage of one dtype go straight to the
  // kernel; everything else (casts, strides, float8, the last block, and
  // blocks holding NaN or Inf) is decoded to doubles first.
  std::optional<Storage> direct = DirectStorage(job.as);
  if (job.actual->dtype != job.as || !job.golden->IsCContiguous() || !job.actual->IsCContiguous()) {
    direct.reset();
  }
  const auto element_size = static_cast<std::int64_t>(DTypeSize(job.as));
  std::array<double, kBlock> g{}, a{}, cg{}, ca{};
  std::array<std::int64_t, kBlock> cidx{};
  for (std::int64_t b = first_block; b < end_block; ++b) {
    const std::int64_t start = b * kBlock;
    const std::int64_t n = std::min(kBlock, total - start);
    RunStats stats;
    bool decoded = false;
    if (direct && n == kBlock) {
      stats = kernel::Kernels().run[static_cast<int>(*direct)](job.golden->data + start * element_size,
                                                              job.actual->data + start * element_size, n, rules);
    }
    if (!(direct && n == kBlock) || !stats.all_finite) {
      g_reader.ReadDoubles(start, n, job.as, g.data());
      a_reader.ReadDoubles(start, n, job.as, a.data());
      decoded = true;
      stats = RunDoubles(g.data(), a.data(), n, rules);
    }
    const double* run_g = g.data();
    const double* run_a = a.data();
    const std::int64_t* run_index = nullptr;  // null: element j is start + j
    std::int64_t m = n;
    if (!stats.all_finite) {
      // Classify the non-finite pairs, then judge the finite ones.
      m = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const double gv = g[i], av = a[i];
        const bool g_nan = std::isnan(gv), a_nan = std::isnan(av);
        const bool g_inf = std::isinf(gv), a_inf = std::isinf(av);
        if (g_nan || a_nan) {
          ++acc->nan_count;
          if (g_nan != a_nan) {
            ++acc->nan_mismatch;
            RecordFirst(&acc->first_mask_mismatches, job.k, start + i, gv, av);
          }
        } else if (g_inf || a_inf) {
          ++acc->inf_count;
          if (!(g_inf && a_inf && std::signbit(gv) == std::signbit(av))) {
            ++acc->inf_mismatch;
            RecordFirst(&acc->first_mask_mismatches, job.k, start + i, gv, av);
          }
        } else {
          cg[m] = gv;
          ca[m] = av;
          cidx[m] = start + i;
          ++m;
        }
      }
      // A finite pair whose difference overflows float64 stays in, as Inf.
      stats = RunDoubles(cg.data(), ca.data(), m, rules);
      run_g = cg.data();
      run_a = ca.data();
      run_index = cidx.data();
    }
    acc->Add(stats, m);
    (*job.block_sums)[b] = {stats.npu_rel_sum, stats.mm_rel_sum};
    if (stats.mm_rel_max > acc->worst.Threshold()) {
      if (!decoded) {
        g_reader.ReadDoubles(start, n, job.as, g.data());
        a_reader.ReadDoubles(start, n, job.as, a.data());
        decoded = true;
      }
      for (std::int64_t j = 0; j < m; ++j) {
        const double score = MereMareRel(run_g[j], run_a[j], rules.mm_threshold);
        if (score > acc->worst.Threshold()) {
          acc->worst.Offer({score, run_index ? run_index[j] : start + j, run_g[j], run_a[j]});
        }
      }
    }
    if (job.bitwise) {
      if (!decoded) {
        g_reader.ReadDoubles(start, n, job.as, g.data());
        a_reader.ReadDoubles(start, n, job.as, a.data());
      }
      CompareBits(g_reader, a_reader, job, start, n, g.data(), a.data(), acc);
    }
  }
}

void JudgeIntegerBlocks(const PartJob& job, std::int64_t first_block, std::int64_t end_block,
                        PartAccumulator* acc) {
  const std::int64_t total = job.golden->NumElements();
  ElementReader g_reader(*job.golden), a_reader(*job.actual);
  std::array<Int128, kBlock> g{}, a{};
  const Int128 allowed = job.route == Route::kQuant ? 1 : 0;
  for (std::int64_t b = first_block; b < end_block; ++b) {
    const std::int64_t start = b * kBlock;
    const std::int64_t n = std::min(kBlock, total - start);
    g_reader.ReadInts(start, n, job.as, g.data());
    a_reader.ReadInts(start, n, job.as, a.data());
    acc->finite += n;
    for (std::int64_t i = 0; i < n; ++i) {
      const bool unrepresentable = a[i] == kUnrepresentable || g[i] == kUnrepresentable;
      const Int128 diff = a[i] > g[i] ? a[i] - g[i] : g[i] - a[i];
      if (diff == 0 && !unrepresentable) continue;
      auto gv = static_cast<double>(g[i]);
      auto av = static_cast<double>(a[i]);
      auto d = static_cast<double>(diff);
      if (unrepresentable) {  // a float with no integer value (NaN, Inf, out of range): report it as it is
        if (g[i] == kUnrepresentable) g_reader.ReadDoubles(start + i, 1, job.golden->dtype, &gv);
        if (a[i] == kUnrepresentable) a_reader.ReadDoubles(start + i, 1, job.actual->dtype, &av);
        d = std::numeric_limits<double>::infinity();
      }
      acc->max_abs = std::max(acc->max_abs, d);
      acc->max_rel = std::max(acc->max_rel, d / (std::fabs(gv) + kNpuRelativeEpsilon));
      if (unrepresentable || diff > allowed) ++acc->discrete_violations;
      ++acc->bit_mismatch;
      RecordFirst(&acc->first_bit_mismatches, job.k, start + i, gv, av);
      if (d > acc->worst.Threshold()) acc->worst.Offer({d, start + i, gv, av});
    }
  }
}

// Kahan-Babuska-Neumaier sum of the block sums, in block order: the result
// does not depend on how blocks were shared between threads.
std::array<double, 2> SumBlocks(const std::vector<std::array<double, 2>>& sums) {
  std::array<double, 2> total{}, compensation{};
  for (const auto& block : sums) {
    for (int k = 0; k < 2; ++k) {
      const double t = total[k] + block[k];
      compensation[k] += std::fabs(total[k]) >= std::fabs(block[k]) ? (total[k] - t) + block[k]
                                                                      : (block[k] - t) + total[k];
      total[k] = t;
    }
  }
  return {total[0] + compensation[0], total[1] + compensation[1]};
}

int ThreadCount(std::int64_t elements, std::int64_t blocks, int requested) {
  if (elements < kParallelThreshold && requested <= 0) return 1;
  int threads = requested > 0 ? requested : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(threads, 1);
  return static_cast<int>(std::min<std::int64_t>(threads, std::max<std::int64_t>(blocks, 1)));
}

struct PartResult {
  OutputMetrics metrics;
  std::vector<Candidate> worst;              // best first
  std::vector<Candidate> mask_mismatches;    // index order
  std::vector<Candidate> bit_mismatches;     // index order
};

PartResult JudgePart(PartJob job, int requested_threads) {
  const std::int64_t total = job.golden->NumElements();
  const std::int64_t blocks = (total + kBlock - 1) / kBlock;
  const bool is_float = IsFloat(job.as);
  std::vector<std::array<double, 2>> block_sums(static_cast<std::size_t>(blocks));
  job.block_sums = &block_sums;

  const int threads = ThreadCount(total, blocks, requested_threads);
  std::vector<PartAccumulator> accs(static_cast<std::size_t>(threads),
                                    PartAccumulator(static_cast<int>(job.k)));
  auto work = [&](int t) {
    const std::int64_t begin = blocks * t / threads;
    const std::int64_t end = blocks * (t + 1) / threads;
    if (is_float) {
      JudgeFloatBlocks(job, begin, end, &accs[t]);
    } else {
      JudgeIntegerBlocks(job, begin, end, &accs[t]);
    }
  };
  if (threads == 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
  }

  // Merge in thread order, which is index order.
  PartAccumulator all(static_cast<int>(job.k));
  std::vector<Candidate> worst;
  for (const auto& acc : accs) {
    all.finite += acc.finite;
    all.nan_count += acc.nan_count;
    all.inf_count += acc.inf_count;
    all.nan_mismatch += acc.nan_mismatch;
    all.inf_mismatch += acc.inf_mismatch;
    all.bit_mismatch += acc.bit_mismatch;
    all.discrete_violations += acc.discrete_violations;
    all.eco_matched += acc.eco_matched;
    all.eco_over += acc.eco_over;
    all.npu_small += acc.npu_small;
    all.npu_matched += acc.npu_matched;
    all.cap += acc.cap;
    all.mm_max = std::max(all.mm_max, acc.mm_max);
    all.max_abs = std::max(all.max_abs, acc.max_abs);
    all.max_rel = std::max(all.max_rel, acc.max_rel);
    worst.insert(worst.end(), acc.worst.items().begin(), acc.worst.items().end());
    for (const auto& c : acc.first_mask_mismatches) RecordFirst(&all.first_mask_mismatches, job.k, c.index, c.golden, c.actual);
    for (const auto& c : acc.first_bit_mismatches) RecordFirst(&all.first_bit_mismatches, job.k, c.index, c.golden, c.actual);
  }
  std::sort(worst.begin(), worst.end(), Better);
  if (worst.size() > job.k) worst.resize(job.k);

  PartResult result;
  result.worst = std::move(worst);
  result.mask_mismatches = std::move(all.first_mask_mismatches);
  result.bit_mismatches = std::move(all.first_bit_mismatches);
  OutputMetrics& m = result.metrics;
  m.total = total;
  m.total_finite = all.finite;
  m.nan_count = all.nan_count;
  m.inf_count = all.inf_count;
  m.nan_mismatch_count = all.nan_mismatch;
  m.inf_mismatch_count = all.inf_mismatch;
  m.max_abs_diff = all.max_abs;
  m.max_rel_diff = all.max_rel;
  m.is_float = is_float;
  if (is_float) {
    const std::int64_t f = all.finite;
    const auto [npu_sum, mm_sum] = SumBlocks(block_sums);
    const OutputRules& r = job.rules;
    if (r.has_eco) {
      EcoMetrics eco;
      eco.thresholds = r.eco;
      eco.matched_count = all.eco_matched;
      eco.matched_ratio = f == 0 ? 1.0 : static_cast<double>(all.eco_matched) / static_cast<double>(f);
      eco.over_count = all.eco_over;
      // 99% in integers: matched / f >= 0.99 without a rounded quotient.
      eco.passed = all.eco_matched * 100 >= f * 99 && all.eco_over == 0;
      m.eco = eco;
    }
    NpuBenchmarkMetrics& npu = m.npu_benchmark;
    npu.thresholds = r.npu;
    npu.matched_count = all.npu_matched;
    npu.matched_ratio = f == 0 ? 1.0 : static_cast<double>(all.npu_matched) / static_cast<double>(f);
    npu.mere = f == 0 ? 0.0 : npu_sum / static_cast<double>(f);
    npu.max_error_cap_violation_count = all.cap;
    npu.small_count = all.npu_small;
    npu.normal_count = f - all.npu_small;
    npu.max_error_cap_passed = all.cap == 0;
    npu.matched_ratio_passed = all.npu_matched * 10 >= f * 9;
    npu.mere_passed = f == 0 || npu.mere < r.npu.rel_threshold;
    npu.passed = npu.max_error_cap_passed && npu.matched_ratio_passed && npu.mere_passed;
    MereMareMetrics& mm = m.mere_mare;
    const double t = r.kernel.mm_threshold;
    mm.threshold = t;
    mm.mere = f == 0 ? 0.0 : mm_sum / static_cast<double>(f);
    mm.mare = f == 0 ? 0.0 : all.mm_max;
    mm.passed = mm.mere < t && mm.mare < kMareFactor * t;
  }
  if (job.route == Route::kBitwise || job.route == Route::kExact || job.route == Route::kQuant) {
    DiscreteMetrics discrete;
    discrete.max_allowed_diff = job.route == Route::kQuant ? 1.0 : 0.0;
    discrete.category = job.route == Route::kBitwise ? "non_compute"
                        : job.route == Route::kQuant ? "quant_fp_to_int"
                        : job.as == DType::kBool     ? "bool_output"
                                                     : "integer_compute";
    discrete.violation_count =
        is_float || job.route == Route::kBitwise ? all.bit_mismatch : all.discrete_violations;
    discrete.passed = discrete.violation_count == 0;
    m.discrete = discrete;
  }
  return result;
}

// Complex outputs: both parts combined. Counts add; a ratio takes the smaller
// part, a mean or maximum the larger, and a check passes when both parts do,
// so each combined check passes exactly when it passes on both parts.
OutputMetrics CombineParts(const OutputMetrics& re, const OutputMetrics& im) {
  OutputMetrics m = re;
  m.total += im.total;
  m.total_finite += im.total_finite;
  m.nan_count += im.nan_count;
  m.inf_count += im.inf_count;
  m.nan_mismatch_count += im.nan_mismatch_count;
  m.inf_mismatch_count += im.inf_mismatch_count;
  m.max_abs_diff = std::max(re.max_abs_diff, im.max_abs_diff);
  m.max_rel_diff = std::max(re.max_rel_diff, im.max_rel_diff);
  if (re.eco && im.eco) {
    m.eco->matched_count += im.eco->matched_count;
    m.eco->matched_ratio = std::min(re.eco->matched_ratio, im.eco->matched_ratio);
    m.eco->over_count += im.eco->over_count;
    m.eco->passed = re.eco->passed && im.eco->passed;
  }
  auto& npu = m.npu_benchmark;
  const auto& inpu = im.npu_benchmark;
  npu.matched_count += inpu.matched_count;
  npu.matched_ratio = std::min(npu.matched_ratio, inpu.matched_ratio);
  npu.mere = std::max(npu.mere, inpu.mere);
  npu.max_error_cap_violation_count += inpu.max_error_cap_violation_count;
  npu.small_count += inpu.small_count;
  npu.normal_count += inpu.normal_count;
  npu.max_error_cap_passed = npu.max_error_cap_passed && inpu.max_error_cap_passed;
  npu.matched_ratio_passed = npu.matched_ratio_passed && inpu.matched_ratio_passed;
  npu.mere_passed = npu.mere_passed && inpu.mere_passed;
  npu.passed = npu.passed && inpu.passed;
  m.mere_mare.mere = std::max(re.mere_mare.mere, im.mere_mare.mere);
  m.mere_mare.mare = std::max(re.mere_mare.mare, im.mere_mare.mare);
  m.mere_mare.passed = re.mere_mare.passed && im.mere_mare.passed;
  if (re.discrete && im.discrete) {
    m.discrete->violation_count += im.discrete->violation_count;
    m.discrete->passed = re.discrete->passed && im.discrete->passed;
  }
  return m;
}

std::string Num(double v) { return Printf("%.6g", v); }

// " (first at index 7: golden 1, actual nan)", or nothing without an element.
std::string FirstAt(const std::vector<WorstElement>& worst) {
  if (worst.empty()) return "";
  const WorstElement& w = worst.front();
  return " (first at index " + std::to_string(w.index) + (w.part.empty() ? "" : " " + w.part) +
         ": golden " + Num(w.golden) + ", actual " + Num(w.actual) + ")";
}

// The failing checks of the deciding route, in one line.
std::string AccuracyMessage(Route route, const OutputMetrics& m) {
  std::vector<std::string> reasons;
  auto eco_reasons = [&] {
    const EcoMetrics& e = *m.eco;
    if (e.matched_count * 100 < m.total_finite * 99) {
      reasons.push_back("eco matched_ratio " + Num(e.matched_ratio) + " < 0.99 (" +
                        std::to_string(m.total_finite - e.matched_count) + " of " +
                        std::to_string(m.total_finite) + " elements outside atol + rtol*|golden|)");
    }
    if (e.over_count > 0) {
      reasons.push_back("eco over_count " + std::to_string(e.over_count) +
                        " > 0 (elements above max(max_abs_error_limit, 32*ULP, atol + rtol*|golden|))");
    }
  };
  auto npu_reasons = [&] {
    const NpuBenchmarkMetrics& n = m.npu_benchmark;
    if (!n.max_error_cap_passed) {
      reasons.push_back("npu_benchmark max_error_cap violated at " +
                        std::to_string(n.max_error_cap_violation_count) + " elements");
    }
    if (!n.matched_ratio_passed) {
      reasons.push_back("npu_benchmark matched_ratio " + Num(n.matched_ratio) + " < 0.9");
    }
    if (!n.mere_passed) {
      reasons.push_back("npu_benchmark MERE " + Num(n.mere) + " >= " + Num(n.thresholds.rel_threshold));
    }
  };
  auto mm_reasons = [&] {
    const MereMareMetrics& mm = m.mere_mare;
    if (!(mm.mere < mm.threshold)) reasons.push_back("MERE " + Num(mm.mere) + " >= " + Num(mm.threshold));
    if (!(mm.mare < kMareFactor * mm.threshold)) {
      reasons.push_back("MARE " + Num(mm.mare) + " >= " + Num(kMareFactor * mm.threshold));
    }
  };
  switch (route) {
    case Route::kEco:
      eco_reasons();
      break;
    case Route::kNpuBenchmark:
      npu_reasons();
      break;
    case Route::kMereMare:
      mm_reasons();
      break;
    case Route::kStrict:
      if (m.eco) {
        eco_reasons();
      } else {
        npu_reasons();
      }
      mm_reasons();
      break;
    case Route::kBitwise:
      reasons.push_back("raw bits differ at " + std::to_string(m.discrete->violation_count) +
                        " of " + std::to_string(m.total) + " elements");
      break;
    case Route::kExact:
      reasons.push_back(std::to_string(m.discrete->violation_count) + " of " +
                        std::to_string(m.total) + " elements differ (max |diff| " +
                        Num(m.max_abs_diff) + ")");
      break;
    case Route::kQuant:
      reasons.push_back(std::to_string(m.discrete->violation_count) + " of " +
                        std::to_string(m.total) + " elements differ by more than 1 (max |diff| " +
                        Num(m.max_abs_diff) + ")");
      break;
  }
  std::string out;
  for (const auto& r : reasons) out += (out.empty() ? "" : "; ") + r;
  return out;
}

bool RoutePassed(Route route, const OutputMetrics& m) {
  switch (route) {
    case Route::kEco:
      return m.eco && m.eco->passed;
    case Route::kNpuBenchmark:
      return m.npu_benchmark.passed;
    case Route::kMereMare:
      return m.mere_mare.passed;
    case Route::kStrict:
      return (m.eco ? m.eco->passed : m.npu_benchmark.passed) && m.mere_mare.passed;
    case Route::kBitwise:
    case Route::kExact:
    case Route::kQuant:
      return m.discrete && m.discrete->passed;
  }
  return false;
}

// A view of one part of a complex tensor (0 real, 1 imaginary).
TensorView ComplexPartView(const TensorView& view, int part) {
  TensorView out = view;
  out.dtype = ComplexPart(view.dtype);
  out.data = view.data + part * static_cast<std::int64_t>(DTypeSize(out.dtype));
  return out;
}

// Reads as zero everywhere: the imaginary part of a real tensor.
TensorView ZeroView(const TensorView& like) {
  static const std::byte kZeros[16] = {};
  TensorView out = like;
  out.strides.assign(like.shape.size(), 0);
  out.data = kZeros;
  return out;
}

WorstElement ToWorst(const Candidate& c, double threshold, const std::string& part) {
  WorstElement w;
  w.index = c.index;
  w.golden = c.golden;
  w.actual = c.actual;
  w.abs_diff = std::fabs(c.actual - c.golden);
  w.rel_diff = MereMareRel(c.golden, c.actual, threshold);
  w.part = part;
  return w;
}

}  // namespace

std::string_view ErrorTypeName(ErrorType error_type) {
  switch (error_type) {
    case ErrorType::kNone:
      return "";
    case ErrorType::kAccuracyError:
      return "AccuracyError";
    case ErrorType::kShapeMismatch:
      return "ShapeMismatch";
    case ErrorType::kNaNMismatch:
      return "NaNMismatch";
    case ErrorType::kInfMismatch:
      return "InfMismatch";
  }
  return "";
}

Verdict Judge(const TensorView& golden, const TensorView& actual, const JudgeOptions& options) {
  Verdict v;
  v.options = options;
  v.dtype = golden.dtype;
  v.actual_dtype = actual.dtype;
  v.shape = golden.shape;
  v.actual_shape = actual.shape;
  v.route = SelectRoute(golden.dtype, options.standard, options.input_type, options.non_compute);
  if (golden.dtype != actual.dtype) v.warnings.emplace_back("dtype_mismatch");

  if (golden.shape != actual.shape) {
    v.error_type = ErrorType::kShapeMismatch;
    v.error_msg = "shape mismatch: golden " + ShapeToString(golden.shape) + " vs actual " +
                  ShapeToString(actual.shape);
    v.metrics.total = golden.NumElements();
    return v;
  }

  // Split complex tensors into two real parts; a real side pairs with them as
  // torch casts it (complex -> real keeps the real part, real -> complex adds 0i).
  struct Part {
    std::string name;
    TensorView golden, actual;
  };
  std::vector<Part> parts;
  if (IsComplex(golden.dtype)) {
    const bool actual_complex = IsComplex(actual.dtype);
    parts.push_back({"real", ComplexPartView(golden, 0),
                     actual_complex ? ComplexPartView(actual, 0) : actual});
    parts.push_back({"imag", ComplexPartView(golden, 1),
                     actual_complex ? ComplexPartView(actual, 1) : ZeroView(actual)});
  } else {
    parts.push_back({"", golden, IsComplex(actual.dtype) ? ComplexPartView(actual, 0) : actual});
  }

  const double mm_threshold = MereMareThresholdFor(golden.dtype, options.precision_mode);
  std::vector<PartResult> results;
  for (const Part& part : parts) {
    PartJob job{};
    job.golden = &part.golden;
    job.actual = &part.actual;
    job.as = part.golden.dtype;
    job.route = v.route;
    job.bitwise = v.route == Route::kBitwise;
    job.k = static_cast<std::size_t>(std::max(options.worst_count, 0));
    if (IsFloat(job.as)) job.rules = MakeRules(golden.dtype, job.as, options.precision_mode);
    results.push_back(JudgePart(job, options.threads));
  }

  if (results.size() == 2) {
    v.metrics = CombineParts(results[0].metrics, results[1].metrics);
    v.parts.emplace_back("real", results[0].metrics);
    v.parts.emplace_back("imag", results[1].metrics);
  } else {
    v.metrics = results[0].metrics;
  }

  // Pick the worst elements that explain the verdict.
  const OutputMetrics& m = v.metrics;
  auto collect = [&](auto member, bool by_score) {
    std::vector<std::pair<Candidate, std::string>> all;
    for (std::size_t p = 0; p < results.size(); ++p) {
      for (const auto& c : results[p].*member) all.emplace_back(c, parts[p].name);
    }
    std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
      return by_score ? Better(a.first, b.first) : a.first.index < b.first.index;
    });
    if (all.size() > static_cast<std::size_t>(std::max(options.worst_count, 0))) {
      all.resize(static_cast<std::size_t>(std::max(options.worst_count, 0)));
    }
    v.worst.clear();
    for (const auto& [c, name] : all) v.worst.push_back(ToWorst(c, mm_threshold, name));
  };

  if (m.is_float && m.nan_mismatch_count > 0) {
    v.error_type = ErrorType::kNaNMismatch;
    collect(&PartResult::mask_mismatches, false);
    v.error_msg = "NaN positions differ at " + std::to_string(m.nan_mismatch_count) + " of " +
                  std::to_string(m.total) + " elements" + FirstAt(v.worst);
  } else if (m.is_float && m.inf_mismatch_count > 0) {
    v.error_type = ErrorType::kInfMismatch;
    collect(&PartResult::mask_mismatches, false);
    v.error_msg = "Inf positions or signs differ at " + std::to_string(m.inf_mismatch_count) +
                  " of " + std::to_string(m.total) + " elements" + FirstAt(v.worst);
  } else {
    // Bitwise failures may have d == 0 (NaN payloads, signed zeros): list them
    // in index order. Every other route lists its largest errors.
    const bool bitwise = v.route == Route::kBitwise;
    collect(bitwise ? &PartResult::bit_mismatches : &PartResult::worst, !bitwise);
    if (!RoutePassed(v.route, m)) {
      v.error_type = ErrorType::kAccuracyError;
      v.error_msg = std::string(RouteName(v.route)) + " failed: " + AccuracyMessage(v.route, m);
    }
  }
  v.passed = v.error_type == ErrorType::kNone;
  return v;
}

}  // namespace opverify
