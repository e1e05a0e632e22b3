// What opverify build this is: the project version (CMakeLists.txt's
// project(VERSION)) and the git commit it was built from, both fixed at
// build time, for --version and for the files a run writes.
#pragma once

#include <string>

namespace opverify {

// "0.1.0": the project version.
const char* Version();

// The short commit ("0b2e721"), with "-dirty" when tracked files differed from
// it at build time; "unknown" when built outside a git checkout.
const char* GitCommit();

// "opverify 0.1.0 (0b2e721)": what every program's --version prints.
std::string VersionLine();

}  // namespace opverify
