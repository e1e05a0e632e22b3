// The declared libraries carried as source, compiled to bytecode once per
// run (docs/PERFORMANCE.md, "The library's bytecode").
//
// Executors see the filesystem read-only (docs/SECURITY.md), so Python never
// writes a library's __pycache__ there, and every executor compiled every
// module of a library carried as source (a `python_path` folder) again as it
// imported it: 0.77 s of a 0.83 s import for a 3.2 MB library. Before its
// first executor, the first rank of each node has `opverify-executor
// --compile-sources` (the executors' own interpreter, isolated: only the
// standard library's compileall runs, no library code) write the bytecode
// beside the sources, as Python itself does when the user imports them;
// executors then read it. Only the library packages are compiled, not the
// rest of their folders; an installed library is left alone (pip compiled it).
// Nothing an executor writes is read by another: the folders stay read-only
// to executors. OPVERIFY_NO_BYTECODE=1 skips it.
#pragma once

#include <string>
#include <vector>

#include "runner/manifest/manifest.h"

namespace opverify {

// Each operator's library packages found in its python_path folders
// (FOLDER/PACKAGE as a folder, or FOLDER/PACKAGE.py), once each, in manifest order.
std::vector<std::string> LibrarySources(const JobManifest& job);

// opverify's own runtime package (RuntimeDir()/opverify_runtime), where its folder is
// writable: a source tree's, as on a device that receives a fresh copy, compiled by no one
// before (every executor compiled its 330 KB again: 80-110 ms against 30 ms from bytecode). An
// installed, read-only runtime is left as installed. Empty with OPVERIFY_NO_BYTECODE=1.
std::vector<std::string> RuntimeSources();

struct CompiledSources {
  bool ran = false;   // false: nothing to compile, or switched off
  bool ok = false;    // every source compiled
  double seconds = 0;
  std::string detail;  // why not, when not ok
};

// `executor_program --compile-sources SOURCES...`, its output in `log_path`
// (compileall's word on a source that does not compile), waited for up to timeout_s
// (then stopped: the executors compile what is missing as they import it).
CompiledSources CompileLibrarySources(const std::vector<std::string>& sources,
                                      const std::string& executor_program,
                                      const std::string& log_path, double timeout_s = 120);

}  // namespace opverify
