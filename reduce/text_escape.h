// Text from a run (operator names, error messages) made safe for the
// reports it lands in.
#pragma once

#include <cstddef>
#include <string>

#include "runner/common/terminal_text.h"

namespace opverify {

// For XML and HTML, in character data and in attributes: &, <, >, " and '
// escaped, and what XML 1.0 does not allow (control characters, invalid
// UTF-8) replaced by U+FFFD.
std::string MarkupEscape(const std::string& text);

// For Markdown text and table cells (report.md, precision_report.md): a
// line break would end the cell, so it becomes a space; terminal controls
// are stripped (TerminalSafe); cut to `limit` characters (0: no limit) with
// "..."; then `|` and `\` are escaped with a backslash (`|golden|` renders as
// itself and keeps the table's columns), and &, < and > become entities, so
// that no "<script>" or "<!--" in a name or an error reaches a renderer as HTML.
std::string MarkdownCell(std::string text, std::size_t limit = 0);

// `text` as an inline Markdown code span: fenced by more backticks than it
// holds in a row (so none ends it early), line breaks as spaces, terminal
// controls stripped. Markdown shows what is inside a code span literally.
std::string MarkdownCode(const std::string& text);

// `text` as a fenced Markdown code block of language `language` (a shell
// command to paste): the fence longer than any backtick run inside, terminal
// controls but '\n' and '\t' stripped.
std::string MarkdownCodeBlock(const std::string& text, const std::string& language);

}  // namespace opverify
