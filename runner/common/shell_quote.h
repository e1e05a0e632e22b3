// Commands printed for a person to paste into a POSIX shell (the "run it
// again" lines of the reports): every word arrives as one argument, byte for
// byte, and nothing in it is code.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace opverify {

// `word` as one POSIX sh word: as it is when it is not empty and holds
// only characters no shell treats specially ([A-Za-z0-9_@%+:,./-]);
// otherwise in single quotes, each quote inside written '\''. Every byte
// but NUL (which no argument can hold) arrives unchanged.
std::string ShellQuote(std::string_view word);

// The words quoted and joined by spaces.
std::string ShellCommand(const std::vector<std::string>& words);

}  // namespace opverify
