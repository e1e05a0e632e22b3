#include "runner/common/console_style.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace opverify {

bool ColourWanted(std::FILE* out) {
  const char* no_colour = std::getenv("NO_COLOR");
  if (no_colour != nullptr && no_colour[0] != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  // Open MPI hands each rank a pseudo-terminal whatever mpirun's own output
  // is (a log, a pipe): under a launcher the rank cannot tell, so no colour.
  for (const char* launcher : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_PROCID"}) {
    if (std::getenv(launcher) != nullptr) return false;
  }
  return out != nullptr && isatty(fileno(out)) == 1;
}

std::string Paint(const std::string& text, Colour colour, bool on) {
  if (!on || text.empty()) return text;
  const char* code = colour == Colour::kRed      ? "31"
                     : colour == Colour::kGreen  ? "32"
                     : colour == Colour::kYellow ? "33"
                                                 : "1";
  return std::string("\033[") + code + "m" + text + "\033[0m";
}

std::string FileUrl(const std::string& path) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(path, error);
  if (error) absolute = path;
  static const char kHex[] = "0123456789ABCDEF";
  std::string url = "file://";
  for (const unsigned char c : absolute.lexically_normal().string()) {
    const bool plain = std::isalnum(c) != 0 || std::strchr("/-._~", c) != nullptr;
    if (plain && c < 0x80) {
      url += static_cast<char>(c);
    } else {
      url += '%';
      url += kHex[c >> 4];
      url += kHex[c & 15];
    }
  }
  return url;
}

}  // namespace opverify
