// An option whose value is one of a few names, bound to an enum field: the
// names are checked (and listed in --help), the field's default is shown by
// name, and `parse` turns the given name into the field's value.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace opverify {

template <typename Enum>
CLI::Option* AddNamedOption(CLI::App* command, const std::string& flag, Enum* field,
                            std::optional<Enum> (*parse)(std::string_view), std::string_view (*name)(Enum),
                            const std::vector<std::string>& names, const std::string& description) {
  return command
      ->add_option_function<std::string>(
          flag, [field, parse](const std::string& given) { *field = *parse(given); }, description)
      ->check(CLI::IsMember(names))
      ->default_str(std::string(name(*field)));
}

}  // namespace opverify
