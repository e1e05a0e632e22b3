// spdlog sinks that never pass an escape sequence from untrusted text
// (an operator's error message, a path) to the terminal or the log file.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace opverify {

// A sink that hands each message to `inner` with TerminalSafe applied to its
// text (the pattern's own colours, added by `inner`, are kept).
spdlog::sink_ptr TerminalSafeSink(spdlog::sink_ptr inner);

// A logger named `name` writing to stderr (in colour on a terminal) through
// TerminalSafeSink: what each program's main installs as the default.
std::shared_ptr<spdlog::logger> ConsoleLogger(const std::string& name);

}  // namespace opverify
