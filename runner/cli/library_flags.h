// --library PKG and --python-path DIR (both repeatable), shared by `opverify
// verify`, `opverify bench` and `opverify lint`: the packages whose Triton
// kernels count as the implementation's own, and the folders they are found in.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "runner/config/operator_config.h"

namespace opverify {

// --allow-torch OP=WHY (repeatable), on `opverify verify` and `opverify lint`:
// a declared exception (docs/MANIFEST.md), refused at parse time without a reason.
inline void AddAllowTorchFlag(CLI::App* command, std::vector<std::string>* texts) {
  command
      ->add_option("--allow-torch", *texts,
                   "A torch operator used outside the kernels by design, with why: OP=WHY, e.g. "
                   "'aten::sort=sorts on the host by design' (repeatable); cases whose only "
                   "violations it covers pass as waived")
      ->allow_extra_args(false)
      ->check([](const std::string& text) {
        Result<TorchAllowance> parsed = ParseAllowanceFlag(text);
        return parsed.ok() ? std::string() : parsed.status().message();
      });
}

// The --allow-torch texts (already checked) as allowances.
inline std::vector<TorchAllowance> AllowancesFromFlags(const std::vector<std::string>& texts) {
  std::vector<TorchAllowance> out;
  for (const std::string& text : texts) {
    Result<TorchAllowance> parsed = ParseAllowanceFlag(text);
    if (parsed.ok()) out.push_back(std::move(parsed).value());
  }
  return out;
}

inline void AddLibraryFlags(CLI::App* command, std::vector<std::string>* library,
                            std::vector<std::string>* python_path) {
  command
      ->add_option("--library", *library,
                   "Package whose Triton kernels count as the implementation's own (repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  command
      ->add_option("--python-path", *python_path,
                   "Folder put first on the executor's sys.path, where --library packages are "
                   "found (repeatable)")
      ->allow_extra_args(false)
      ->check(CLI::ExistingDirectory);
}

// The --python-path folders as absolute paths: the executor runs elsewhere.
inline std::vector<std::string> AbsolutePaths(const std::vector<std::string>& folders) {
  std::vector<std::string> out;
  for (const std::string& folder : folders) {
    out.push_back(std::filesystem::absolute(folder).lexically_normal().string());
  }
  return out;
}

}  // namespace opverify
