#include "runner/common/failure_list.h"

#include "runner/common/terminal_text.h"

namespace opverify {

std::vector<std::string> FailureListLines(const std::vector<FailedCase>& failed, std::size_t cap,
                                          const std::string& where) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < failed.size() && i < cap; ++i) {
    const FailedCase& f = failed[i];
    std::string line = "FAILED " + TerminalLine(f.id, 200) + "  " + TerminalLine(f.error_type, 60);
    if (!f.ab_class.empty()) line += " (" + TerminalLine(f.ab_class, 40) + ")";
    const std::string message = TerminalLine(f.message, 160);
    if (!message.empty()) line += "  " + message;
    lines.push_back(std::move(line));
  }
  if (failed.size() > cap) {
    lines.push_back("... and " + std::to_string(failed.size() - cap) + " more (see " +
                    TerminalLine(where, 400) + ")");
  }
  return lines;
}

}  // namespace opverify
