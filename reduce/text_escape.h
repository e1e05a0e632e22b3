// Text from a run (operator names, error messages) made safe for the
// reports it lands in.
#pragma once

#include <cstddef>
#include <string>

namespace opverify {

// For XML and HTML, in character data and in attributes: &, <, >, " and '
// escaped, and what XML 1.0 does not allow (control characters, invalid
// UTF-8) replaced by U+FFFD.
std::string MarkupEscape(const std::string& text);

// For a Markdown table cell: a pipe or a line break would end the cell, so
// they become spaces; cut to `limit` characters (0: no limit) with "...".
std::string MarkdownCell(std::string text, std::size_t limit = 0);

}  // namespace opverify
