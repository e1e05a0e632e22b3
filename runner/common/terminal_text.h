// Untrusted text (operator names, error messages, paths from a manifest or
// a store) made safe to print on a terminal, where an escape sequence could
// move the cursor, rewrite what is shown, set the window title or worse.
#pragma once

#include <string>
#include <string_view>

namespace opverify {

// `text` without what a terminal would act on: ESC and the sequence it
// starts (CSI "ESC [ ... final", OSC "ESC ] ... BEL or ESC \", and the
// two-byte ones), the C1 controls (U+0080..U+009F, 8-bit CSI and OSC
// included), DEL and every other C0 control but '\n' and '\t'. Invalid
// UTF-8 becomes U+FFFD.
std::string TerminalSafe(std::string_view text);

// TerminalSafe(text) on one line, for a console list or a progress line:
// newlines and tabs become spaces, runs of spaces one, the ends trimmed, and
// at most `limit` code points kept (the cut marked with "...").
std::string TerminalLine(std::string_view text, std::size_t limit);

}  // namespace opverify
