// The sample cases shard_test and shard_writer_child write (and
// test_shard_h5py.py expects): case i of a rank is
//   case_id "op<i%3>/case-<i:04>", op_name "op<i%3>", case_index i,
//   failed when i % 4 == 3 (AccuracyError, an A/B record classified "real_defect"),
//   output 0: bfloat16 [4, 8] golden k/8 and actual k/8 (+1/8 at element 5
//   when failed); output 1: float32 [elements] golden k and actual k + 0.5.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/strings.h"
#include "runner/store/case_record.h"
#include "tests/support/tensor_builder.h"

namespace opverify::testing {

// A record and the tensors its views point into (heap buffers: the views
// stay valid when the SampleCase is moved).
struct SampleCase {
  CaseRecord record;
  std::vector<OwnedTensor> tensors;
};

inline SampleCase MakeSampleCase(int i, int rank, std::int64_t float_elements = 16) {
  SampleCase sample;
  CaseRecord& r = sample.record;
  const bool passed = i % 4 != 3;
  r.case_id = Printf("op%d/case-%04d", i % 3, i);
  r.op_name = Printf("op%d", i % 3);
  r.case_index = i;
  r.params = {{"n", i}, {"mode", "fast"}, {"scale", 0.5}};
  r.input_desc = nlohmann::json::array({{{"name", "x"}, {"dtype", "bfloat16"}, {"shape", {4, 8}}}});
  r.passed = passed;
  r.route = "eco";
  r.error_type = passed ? "" : "AccuracyError";
  // Long, multi-line, not ASCII: what an operator's error can look like.
  r.error_msg = passed ? ""
                       : "output 0: 1 of 32 elements over tolerance \xe2\x80\x94 \xc3\xa9\n" +
                             std::string(5000, 'x');
  r.outputs = nlohmann::json::array(
      {{{"passed", passed},
        {"route", "eco"},
        {"metrics", {{"max_abs_diff", passed ? 0.0 : 0.125}, {"max_rel_diff", "NaN"}}},
        {"worst", nlohmann::json::array({{{"index", 5}, {"golden", 0.625}, {"actual", 0.75}}})}},
       {{"passed", true},
        {"route", "eco"},
        {"metrics", {{"max_abs_diff", 0.5}, {"max_rel_diff", 1.0}}}}});
  r.timings = {{"wall_ms", 5.0},
               {"compile_ms", 1.5},
               {"golden_ms", 2.0},
               {"impl_ms", 0.25 * i},
               {"judge_ms", 0.125}};
  r.rank = rank;
  r.device = "cpu";
  r.ab = passed ? nlohmann::json(nullptr)
                : nlohmann::json{{"classification", "real_defect"}, {"bitwise_equal", true}};
  r.extra = {{"warnings", nlohmann::json::array()}};

  std::vector<double> small(32), golden(static_cast<std::size_t>(float_elements)),
      actual(golden.size());
  for (std::size_t k = 0; k < small.size(); ++k) small[k] = static_cast<double>(k) / 8;
  for (std::size_t k = 0; k < golden.size(); ++k) {
    golden[k] = static_cast<double>(k);
    actual[k] = static_cast<double>(k) + 0.5;
  }
  std::vector<double> small_actual = small;
  if (!passed) small_actual[5] += 0.125;
  sample.tensors.emplace_back(DType::kBFloat16, std::vector<std::int64_t>{4, 8}, small);
  sample.tensors.emplace_back(DType::kBFloat16, std::vector<std::int64_t>{4, 8}, small_actual);
  sample.tensors.emplace_back(DType::kFloat32, golden);
  sample.tensors.emplace_back(DType::kFloat32, actual);
  r.tensors = {{sample.tensors[0].view(), sample.tensors[1].view()},
               {sample.tensors[2].view(), sample.tensors[3].view()}};
  return sample;
}

}  // namespace opverify::testing
