// --library PKG and --python-path DIR (both repeatable), shared by `opverify
// verify`, `opverify bench` and `opverify lint`: the packages whose Triton
// kernels count as the implementation's own, and the folders they are found in.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace opverify {

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
