// spdlog sinks that never pass an escape sequence from untrusted text
// (an operator's error message, a path) to the terminal or the log file.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace opverify {

// A sink that hands each message to `inner` with TerminalSafe applied to its
// text (the pattern's own colours, added by `inner`, are kept). `console`:
// `inner` writes to stderr, where a live line (ShowLiveLine) may stand: it
// is cleared before each message and drawn again after it.
spdlog::sink_ptr TerminalSafeSink(spdlog::sink_ptr inner, bool console = false);

// The one live line of stderr (a progress line redrawn in place, "\r\033[K"
// first): drawn now and after every console log message until ClearLiveLine.
// `line` must already be terminal-safe. Safe from any thread.
void ShowLiveLine(const std::string& line);
void ClearLiveLine();  // the line stays on the screen; it is no longer redrawn
// `text` (terminal-safe) as a whole line of stderr above the live line.
void PrintAboveLiveLine(const std::string& text);

// A logger named `name` writing to stderr (in colour on a terminal) through
// TerminalSafeSink: what each program's main installs as the default.
std::shared_ptr<spdlog::logger> ConsoleLogger(const std::string& name);

}  // namespace opverify
