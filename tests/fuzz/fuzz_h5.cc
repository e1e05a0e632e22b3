// libFuzzer target: an HDF5 file read as a tensor input (FILE.h5:/t, the
// layouts h5py writes); what it yields is walked element by element.
//
// Each input is read twice. First as `opverify compare` reads it, through
// ReadTensorFile, whose forked reader turns a crash or a loop of libhdf5
// (Debian's, not instrumented: it has both, tensor_io/isolated_read.h) into
// an error. A sanitizer's report in our own reader code ends that child with
// an exit code instead of a signal: a finding, so it traps. Then, unless the
// library crashed or hung, in this process with ReadH5Dataset: coverage is
// only seen here (the child's counters die with it), and both reads must
// agree on whether the file is a tensor.
//
// ASan's interceptors (memcpy, strlen, ...) also check the calls libhdf5
// makes, so an overread inside the library is reported in the child too,
// with an exit code. Such a report whose stack reaches libhdf5 before our
// code is the library's crash, not ours: LibraryReport ends the child with
// SIGABRT instead, as the uninstrumented library's own crash would.
//
// libFuzzer's malloc limit (-malloc_limit_mb, else -rss_limit_mb) holds in
// the child too, and ends it with an exit code: right for an allocation of
// ours (ReadH5Dataset must not allocate what the file cannot hold), not for
// libhdf5's own (an object header claiming 4 GB makes H5Dopen2 malloc 4 GB;
// under glibc that fails cleanly: "addr overflow"). A malloc hook installed
// before libFuzzer's ends the child with SIGABRT when an allocation past the
// limit comes from inside libhdf5, so that case too is the library's.
#include <dlfcn.h>
#include <execinfo.h>
#include <sanitizer/allocator_interface.h>
#include <sanitizer/asan_interface.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>

#include "runner/tensor_io/h5_tensor.h"
#include "runner/tensor_io/tensor_file.h"
#include "tests/fuzz/fuzz_input_file.h"

namespace {

bool Contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

void Walk(const opverify::TensorView& view) {
  volatile std::uint8_t sink = 0;
  const std::int64_t count = view.NumElements();
  for (std::int64_t i = 0; i < count && i < (1 << 16); ++i) {
    sink = sink ^ *reinterpret_cast<const std::uint8_t*>(view.ElementAt(i));
  }
  if (count > 0) sink = sink ^ *reinterpret_cast<const std::uint8_t*>(view.ElementAt(count - 1));
  (void)sink;
}

// Whether the first stack of an ASan report reaches libhdf5 before any frame
// of instrumented code: the sanitizer's interceptors (memcpy, strdup, ...)
// are frames of this binary without a source location, our code has one.
bool FirstFrameInLibhdf5(const char* report) {
  std::istringstream lines(report);
  std::string line;
  bool in_stack = false;
  while (std::getline(lines, line)) {
    const std::size_t start = line.find_first_not_of(' ');
    const bool frame = start != std::string::npos && line[start] == '#';
    if (!frame) {
      if (in_stack) return false;
      continue;
    }
    in_stack = true;
    if (Contains(line, "libhdf5")) return true;
    if (Contains(line, ".cc:") || Contains(line, ".h:") || Contains(line, ".c:")) return false;
  }
  return false;
}

void LibraryCrash() {
  std::signal(SIGABRT, SIG_DFL);
  std::raise(SIGABRT);
}

void LibraryReport(const char* report) {
  if (FirstFrameInLibhdf5(report)) LibraryCrash();
}

std::size_t g_malloc_limit = std::size_t{2048} << 20;  // libFuzzer's default rss limit

// Whether a frame of the calling stack is libhdf5's: our code never
// allocates from inside a libhdf5 call.
bool CalledFromLibhdf5() {
  void* frames[48];
  const int count = backtrace(frames, 48);
  for (int i = 1; i < count; ++i) {
    Dl_info info{};
    if (dladdr(frames[i], &info) != 0 && info.dli_fname && std::strstr(info.dli_fname, "libhdf5"))
      return true;
  }
  return false;
}

void LimitHook(const volatile void*, std::size_t size) {
  if (size > g_malloc_limit && CalledFromLibhdf5()) LibraryCrash();
}

void NoFreeHook(const volatile void*) {}

// -malloc_limit_mb, else -rss_limit_mb, as libFuzzer takes them.
void TakeMallocLimit(int argc, char** argv) {
  std::optional<long> rss, malloc;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    for (auto [flag, value] : {std::pair{"-rss_limit_mb=", &rss}, {"-malloc_limit_mb=", &malloc}}) {
      if (arg.rfind(flag, 0) == 0) *value = std::atol(arg.c_str() + std::strlen(flag));
    }
  }
  const long mb = malloc && *malloc > 0 ? *malloc : rss.value_or(2048);
  if (mb > 0) g_malloc_limit = static_cast<std::size_t>(mb) << 20;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  __asan_set_error_report_callback(LibraryReport);
  TakeMallocLimit(*argc, *argv);
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc's unwinder now, not inside the hook
  __sanitizer_install_malloc_and_free_hooks(LimitHook, NoFreeHook);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = opverify::fuzz::WriteInput("t.h5", data, size);
  for (const char* dataset : {"/t", "/g/t"}) {
    const opverify::Result<opverify::LoadedTensor> isolated =
        opverify::ReadTensorFile(path + ":" + dataset, std::nullopt, std::chrono::seconds(1));
    if (isolated.ok()) {
      Walk(isolated->view);
    } else {
      const std::string& message = isolated.status().message();
      if (message.empty() || Contains(message, "crashed the reader (exit code")) __builtin_trap();
      if (Contains(message, "crashed the reader") || Contains(message, "made no progress"))
        continue;
    }
    const opverify::Result<opverify::LoadedTensor> read =
        opverify::ReadH5Dataset(path, dataset, std::nullopt);
    if (read.ok() != isolated.ok() || (!read.ok() && read.status().message().empty()))
      __builtin_trap();
    if (read.ok()) Walk(read->view);
  }
  return 0;
}
