#include "runner/common/shell_quote.h"

#include <algorithm>

namespace opverify {
namespace {

// No shell gives these a meaning anywhere in a word ('=' could make a first
// word an assignment and '~' a home folder, so they are quoted).
bool Plain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '@' || c == '%' || c == '+' || c == ':' || c == ',' || c == '.' || c == '/' ||
         c == '-';
}

}  // namespace

std::string ShellQuote(std::string_view word) {
  if (!word.empty() && std::all_of(word.begin(), word.end(), Plain)) return std::string(word);
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";  // end the quote, an escaped quote, quote again
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string ShellCommand(const std::vector<std::string>& words) {
  std::string command;
  for (const std::string& word : words) {
    if (!command.empty()) command += ' ';
    command += ShellQuote(word);
  }
  return command;
}

}  // namespace opverify
