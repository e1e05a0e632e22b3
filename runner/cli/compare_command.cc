#include "runner/cli/compare_command.h"

#include <iostream>
#include <optional>

#include "runner/judge/judge.h"
#include "runner/judge/verdict_json.h"
#include "runner/tensor_io/tensor_file.h"
#include "runner/usage/usage.h"

namespace opverify {

CLI::App* AddCompareCommand(CLI::App& parent, CompareArgs* args) {
  CLI::App* cmd = parent.add_subcommand(
      "compare", "Judge an actual tensor against its golden by PRECISION.md's rules");
  cmd->add_option("--golden", args->golden, "Golden tensor: FILE.npy or FILE.h5:/dataset")->required();
  cmd->add_option("--actual", args->actual, "Actual tensor: FILE.npy or FILE.h5:/dataset")->required();
  cmd->add_option("--dtype", args->dtype,
                  "Logical dtype of raw storage (bfloat16, float8_e4m3fn, float8_e5m2 stored as "
                  "uint16/uint8)");
  cmd->add_option("--input-type", args->input_type,
                  "The operator's input type, for integer outputs (default: unknown = exact)")
      ->check(CLI::IsMember({"float", "int", "no_tensor", "unknown"}));
  cmd->add_flag("--non-compute", args->non_compute, "Data movement operator: raw bits must match");
  cmd->add_option("--standard", args->standard, "Precision standard")
      ->check(CLI::IsMember({"eco", "npu_benchmark", "mere_mare", "strict"}));
  cmd->add_option("--precision-mode", args->precision_mode, "hf32/tf32: float32 uses the hifloat32 rows")
      ->check(CLI::IsMember({"none", "hf32", "tf32"}));
  cmd->add_flag("--json", args->json, "Print one JSON object (schemas/compare-result.schema.json)");
  cmd->add_option("--worst", args->worst, "Worst elements to report")->check(CLI::Range(0, 100000));
  cmd->add_option("--threads", args->threads, "Threads (0: all cores for large tensors)")
      ->check(CLI::Range(0, 4096));
  return cmd;
}

int RunCompare(const CompareArgs& args) {
  std::optional<DType> logical;
  if (!args.dtype.empty()) {
    logical = ParseDType(args.dtype);
    if (!logical) {
      std::cerr << "opverify compare: unknown dtype '" << args.dtype << "'\n";
      return 2;
    }
  }
  Result<LoadedTensor> golden = ReadTensorFile(args.golden, logical);
  if (!golden.ok()) {
    std::cerr << "opverify compare: golden: " << golden.status().ToString() << "\n";
    return 2;
  }
  Result<LoadedTensor> actual = ReadTensorFile(args.actual, logical);
  if (!actual.ok()) {
    std::cerr << "opverify compare: actual: " << actual.status().ToString() << "\n";
    return 2;
  }
  JudgeOptions options;
  options.standard = *ParseStandard(args.standard);
  options.input_type = *ParseInputType(args.input_type);
  options.precision_mode = *ParsePrecisionMode(args.precision_mode);
  options.non_compute = args.non_compute;
  options.worst_count = args.worst;
  options.threads = args.threads;
  const Verdict verdict = Judge(golden->view, actual->view, options);
  if (args.json) {
    std::cout << VerdictToJson(verdict).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << VerdictSummary(verdict);
  }
  return verdict.passed ? 0 : 1;
}

}  // namespace opverify
