// The cost of handing output tensors from an executor to its parent: an
// executor ships N bytes (through the shared memory file) and the parent reads
// them all; the baseline, in the same run, is the parent copying N bytes
// in its own memory (memcpy) and reading them.
//
// Usage: build/perf/opverify_bench_transfer [repeats]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "runner/executor/executor_client.h"

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::uint64_t Touch(const std::byte* data, std::size_t n) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; i += 64) sum += static_cast<std::uint8_t>(data[i]);
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::stoi(argv[1]) : 9;
  auto started = opverify::ProcessExecutor::Start({});
  if (!started.ok()) {
    std::fprintf(stderr, "%s\n", started.status().ToString().c_str());
    return 1;
  }
  auto& executor = *started.value();
  std::printf("%12s %14s %14s %10s %12s\n", "bytes", "executor ms", "memcpy ms", "ratio", "GB/s");
  std::uint64_t sink = 0;
  for (std::size_t nbytes : {std::size_t{1} << 10, std::size_t{1} << 20, std::size_t{16} << 20,
                             std::size_t{256} << 20, std::size_t{1} << 30}) {
    std::vector<double> shipped, copied;
    std::vector<std::byte> source(nbytes, std::byte{7}), target(nbytes);
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      opverify::CallResult call = executor.Call(
          opverify::executor_protocol::BenchTransferRequest{static_cast<std::int64_t>(nbytes)}, 600);
      if (call.failure != opverify::CallFailure::kNone || call.tensors.size() != 1) {
        std::fprintf(stderr, "transfer failed: %s %s\n", call.detail.c_str(), call.reply.dump().c_str());
        return 1;
      }
      sink += Touch(call.tensors[0].data, nbytes);
      const auto t1 = std::chrono::steady_clock::now();
      std::memcpy(target.data(), source.data(), nbytes);
      sink += Touch(target.data(), nbytes);
      const auto t2 = std::chrono::steady_clock::now();
      shipped.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      copied.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    }
    const double s = Median(shipped), c = Median(copied);
    std::printf("%12zu %14.3f %14.3f %9.1fx %12.2f\n", nbytes, s, c, s / c, nbytes / s / 1e6);
  }
  executor.Stop();
  return sink == 0 ? 1 : 0;
}
