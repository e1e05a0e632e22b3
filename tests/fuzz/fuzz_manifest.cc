// libFuzzer target: a job manifest, through the whole loader (JSON, schema,
// includes, discovery, defaults, sweep caps). Beside it sit one operator's
// files (op_torch.py, op_cpu_impl.py), so entries that name "op" in "." or
// glob "*_torch.py" resolve and reach the sweep and config code.
#include <cstdint>
#include <string>

#include "runner/manifest/manifest.h"
#include "tests/fuzz/fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool kFixtures = [] {
    const std::uint8_t text[] = "class Model: pass\n";
    opverify::fuzz::WriteInput("op_torch.py", text, sizeof text - 1);
    opverify::fuzz::WriteInput("op_cpu_impl.py", text, sizeof text - 1);
    return true;
  }();
  (void)kFixtures;
  const std::string path = opverify::fuzz::WriteInput("job.json", data, size);
  opverify::ManifestLimits limits;
  limits.job_cases = 100000;  // what a fuzzed sweep may expand to: keeps each run fast
  const opverify::Result<opverify::JobManifest> loaded = opverify::LoadManifest(path, limits);
  if (!loaded.ok() && loaded.status().message().empty())
    __builtin_trap();  // every refusal says why
  return 0;
}
