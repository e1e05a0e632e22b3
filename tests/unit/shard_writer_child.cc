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
#include <string>

#include "runner/store/shard.h"
#include "tests/unit/shard_sample_case.h"

namespace {

int Fail(const opverify::Status& status) {
  std::printf("error: %s\n", status.ToString().c_str());
  std::fflush(stdout);
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace opverify;
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s RUN_DIR COUNT [options]\n", argv[0]);
    return 2;
  }
  const std::string run_dir = argv[1];
  const long count = std::atol(argv[2]);
  int rank = 0;
  int first = 0;
  long long elements = 16;
  bool index = false;
  StorePolicy policy = StorePolicy::kAll;
  Durability durability = Durability::kMachineCrash;
  for (int i = 3; i < argc; ++i) {
    const std::string flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (flag == "--index") {
      index = true;
      continue;
    }
    if (value == nullptr) {
      std::fprintf(stderr, "%s needs a value\n", flag.c_str());
      return 2;
    }
    ++i;
    if (flag == "--rank") {
      rank = std::atoi(value);
    } else if (flag == "--first") {
      first = std::atoi(value);
    } else if (flag == "--elements") {
      elements = std::atoll(value);
    } else if (flag == "--policy" && ParseStorePolicy(value)) {
      policy = *ParseStorePolicy(value);
    } else if (flag == "--durability" &&
               (std::string(value) == "process" || std::string(value) == "machine")) {
      durability =
          std::string(value) == "process" ? Durability::kProcessCrash : Durability::kMachineCrash;
    } else if (flag == "--max-file-bytes") {
      const rlim_t bytes = std::strtoull(value, nullptr, 10);
      const rlimit limit{bytes, bytes};
      signal(SIGXFSZ, SIG_IGN);  // a write past the limit then fails with EFBIG
      if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 2;
    } else {
      std::fprintf(stderr, "bad option %s %s\n", flag.c_str(), value);
      return 2;
    }
  }

  Result<std::unique_ptr<ShardWriter>> writer =
      ShardWriter::Create(run_dir, rank, policy, durability);
  if (!writer.ok()) return Fail(writer.status());
  for (long i = first; count == 0 || i < first + count; ++i) {
    const testing::SampleCase sample = testing::MakeSampleCase(static_cast<int>(i), rank, elements);
    Status appended = writer.value()->Append(sample.record);
    if (!appended.ok()) return Fail(appended);
    std::printf("journaled %s\n", sample.record.case_id.c_str());
    std::fflush(stdout);
  }
  if (index) {
    Status indexed = WriteResultsIndex(run_dir);
    if (!indexed.ok()) return Fail(indexed);
  }
  return 0;
}
