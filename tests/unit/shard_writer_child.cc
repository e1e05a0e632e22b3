// A rank's store in a process of its own, for tests that kill it or starve
// it of disk: appends sample cases (shard_sample_case.h) to a new shard of
// RUN_DIR and prints "journaled <case_id>" once each Append returns.
//
//   shard_writer_child RUN_DIR COUNT [--rank R] [--first I] [--policy all|failures|none]
//                      [--elements E] [--max-file-bytes B] [--durability process|machine]
//                      [--index]
//
// COUNT 0: forever (until killed). --first: the first case number.
// --elements: float32 elements of output 1 (default 16). --max-file-bytes:
// RLIMIT_FSIZE, so writes past B bytes fail with EFBIG as on a full disk.
// --index: WriteResultsIndex at the end. Exit 0 when done, 3 with
// "error: <message>" when the store fails, 2 on bad arguments.
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "runner/store/results_index.h"
#include "runner/store/shard_writer.h"
#include "tests/unit/shard_sample_case.h"

namespace opverify {
namespace {

struct ChildOptions {
  std::string run_dir;
  long count = 0;
  int rank = 0;
  int first = 0;
  long long elements = 16;
  bool index = false;
  StorePolicy policy = StorePolicy::kAll;
  Durability durability = Durability::kMachineCrash;
};

// nullopt (after saying why on stderr) on bad arguments.
std::optional<ChildOptions> ParseArguments(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s RUN_DIR COUNT [options]\n", argv[0]);
    return std::nullopt;
  }
  ChildOptions options;
  options.run_dir = argv[1];
  options.count = std::atol(argv[2]);
  for (int i = 3; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--index") {
      options.index = true;
      continue;
    }
    if (i + 1 == argc) {
      std::fprintf(stderr, "%s needs a value\n", flag.c_str());
      return std::nullopt;
    }
    const std::string value = argv[++i];
    if (flag == "--rank") {
      options.rank = std::atoi(value.c_str());
    } else if (flag == "--first") {
      options.first = std::atoi(value.c_str());
    } else if (flag == "--elements") {
      options.elements = std::atoll(value.c_str());
    } else if (flag == "--policy" && ParseStorePolicy(value)) {
      options.policy = *ParseStorePolicy(value);
    } else if (flag == "--durability" && (value == "process" || value == "machine")) {
      options.durability =
          value == "process" ? Durability::kProcessCrash : Durability::kMachineCrash;
    } else if (flag == "--max-file-bytes") {
      const rlim_t bytes = std::strtoull(value.c_str(), nullptr, 10);
      const rlimit limit{bytes, bytes};
      signal(SIGXFSZ, SIG_IGN);  // a write past the limit then fails with EFBIG
      if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return std::nullopt;
    } else {
      std::fprintf(stderr, "bad option %s %s\n", flag.c_str(), value.c_str());
      return std::nullopt;
    }
  }
  return options;
}

int Fail(const Status& status) {
  std::printf("error: %s\n", status.ToString().c_str());
  std::fflush(stdout);
  return 3;
}

int Run(const ChildOptions& options) {
  Result<std::unique_ptr<ShardWriter>> writer =
      ShardWriter::Create(options.run_dir, options.rank, options.policy, options.durability);
  if (!writer.ok()) return Fail(writer.status());
  for (long i = options.first; options.count == 0 || i < options.first + options.count; ++i) {
    const testing::SampleCase sample =
        testing::MakeSampleCase(static_cast<int>(i), options.rank, options.elements);
    Status appended = writer.value()->Append(sample.record);
    if (!appended.ok()) return Fail(appended);
    std::printf("journaled %s\n", sample.record.case_id.c_str());
    std::fflush(stdout);
  }
  if (options.index) {
    Status indexed = WriteResultsIndex(options.run_dir);
    if (!indexed.ok()) return Fail(indexed);
  }
  return 0;
}

}  // namespace
}  // namespace opverify

int main(int argc, char** argv) {
  const std::optional<opverify::ChildOptions> options = opverify::ParseArguments(argc, argv);
  return options ? opverify::Run(*options) : 2;
}
