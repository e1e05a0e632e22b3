// The float route of one part: every float standard's counts and sums through
// the kernel (judge_kernel.h), NaN and Inf classified here, the worst
// elements, and the raw bits on the bitwise route (part_accumulator.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>

#include "runner/judge/element_reader.h"
#include "runner/judge/float_format.h"
#include "runner/judge/judge_kernel.h"
#include "runner/judge/judge_part.h"
#include "runner/judge/part_accumulator.h"

namespace opverify::judge_internal {
namespace {

using kernel::FloatRules;
using kernel::RunStats;
using kernel::Storage;

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

// Pairs [start, start + n) decoded to doubles.
void Decode(ElementReader& g_reader, ElementReader& a_reader, DType as, std::int64_t start,
            std::int64_t n, double* g, double* a) {
  g_reader.ReadDoubles(start, n, as, g);
  a_reader.ReadDoubles(start, n, as, a);
}

// The non-finite pairs of a decoded block [start, start + n) classified
// (NaN and Inf counts and mismatches); the finite ones copied, with their
// indices, to cg, ca and cidx. Returns how many are finite.
std::int64_t SplitNonFinite(const PartJob& job, std::int64_t start, std::int64_t n, const double* g,
                            const double* a, double* cg, double* ca, std::int64_t* cidx,
                            PartAccumulator* acc) {
  std::int64_t m = 0;
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
  return m;
}

// Offers m judged pairs to the worst elements; pair j is element
// index[j], or start + j where index is null.
void OfferWorst(const double* g, const double* a, const std::int64_t* index, std::int64_t start,
                std::int64_t m, double mm_threshold, WorstKeeper* worst) {
  for (std::int64_t j = 0; j < m; ++j) {
    const double score = MereMareRel(g[j], a[j], mm_threshold);
    if (score > worst->Threshold()) worst->Offer({score, index ? index[j] : start + j, g[j], a[j]});
  }
}

}  // namespace

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
  k.ulp32_exponent_shift =
      static_cast<std::int64_t>(format.mantissa_bits - 5) * (std::int64_t{1} << 52);
  k.svt = rules.npu.small_value_threshold;
  k.sve = rules.npu.small_value_error;
  k.rel = rules.npu.rel_threshold;
  k.cap_atol = rules.npu.cap_atol;
  k.cap_rtol = rules.npu.cap_rtol;
  k.mm_threshold = MereMareThresholdFor(output_dtype, mode);
  return rules;
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
      stats = kernel::Kernels().run[static_cast<int>(*direct)](
          job.golden->data + start * element_size, job.actual->data + start * element_size, n,
          rules);
    }
    if (!(direct && n == kBlock) || !stats.all_finite) {
      Decode(g_reader, a_reader, job.as, start, n, g.data(), a.data());
      decoded = true;
      stats = RunDoubles(g.data(), a.data(), n, rules);
    }
    const double* run_g = g.data();
    const double* run_a = a.data();
    const std::int64_t* run_index = nullptr;  // null: element j is start + j
    std::int64_t m = n;
    if (!stats.all_finite) {
      m = SplitNonFinite(job, start, n, g.data(), a.data(), cg.data(), ca.data(), cidx.data(), acc);
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
        Decode(g_reader, a_reader, job.as, start, n, g.data(), a.data());
        decoded = true;
      }
      OfferWorst(run_g, run_a, run_index, start, m, rules.mm_threshold, &acc->worst);
    }
    if (job.bitwise) {
      if (!decoded) Decode(g_reader, a_reader, job.as, start, n, g.data(), a.data());
      CompareBits(g_reader, a_reader, job, start, n, g.data(), a.data(), acc);
    }
  }
}

}  // namespace opverify::judge_internal
