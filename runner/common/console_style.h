// What the programs' last lines look like on a terminal: colour where the
// output is a terminal and the user has not said NO_COLOR (https://no-color.org),
// never in a file, a pipe or under mpirun (whose ranks write to a pipe); and
// the report's path as a file:// link a terminal can open.
#pragma once

#include <cstdio>
#include <string>

namespace opverify {

enum class Colour { kRed, kGreen, kYellow, kBold };

// True when `out` is a terminal, NO_COLOR is unset or empty, TERM is not
// "dumb" and no launcher (mpirun, srun) started the process.
bool ColourWanted(std::FILE* out);

// `text` in `colour` (an ANSI escape and a reset) when `on`, else `text` as it is.
std::string Paint(const std::string& text, Colour colour, bool on);

// "file:///abs/path" with the bytes a URL cannot hold percent-encoded; a
// relative `path` is made absolute first.
std::string FileUrl(const std::string& path);

}  // namespace opverify
