// opverify-batch's command line: the flags, parsed into BatchOptions.
#pragma once

#include <optional>
#include <string>

#include "reduce/performance_flags.h"
#include "runner/batch/batch_options.h"

namespace opverify {

struct BatchFlags {
  BatchOptions options;
  std::string store;  // --store as given (run.json records it)
  std::string part;   // --part (or its old name --shard) as given; empty when absent
  // --references, --history: checked and appended once the reports' data
  // files are written, as opverify-reduce does.
  PerformanceFlags perf;
};

// The flags of one run, or nullopt when the program ends here: --help
// (*exit_code 0) or a flag it refuses (*exit_code 2), its message printed.
std::optional<BatchFlags> ParseBatchFlags(int argc, char** argv, int* exit_code);

}  // namespace opverify
