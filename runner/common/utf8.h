// UTF-8 text from outside (an executor's error message, a crashed process's
// output) made safe for JSON, and cut without splitting a character.
// nlohmann::json refuses to write a string that is not valid UTF-8, so every
// message that can reach a result file passes through here.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace opverify {

// The code point of the UTF-8 sequence at text[*i], advancing *i past it; or
// -1 for a byte that starts no valid sequence (overlong forms, surrogates and
// values above U+10FFFF included), advancing one byte.
long NextCodePoint(std::string_view text, std::size_t* i);

// `text` with every invalid byte replaced by U+FFFD.
std::string ValidUtf8(std::string_view text);

// The number of code points of ValidUtf8(text).
std::size_t CodePointCount(std::string_view text);

// The first `count` code points of ValidUtf8(text).
std::string Utf8Prefix(std::string_view text, std::size_t count);

// At most `limit` code points kept, half from each end, with the seed's
// marker between them ("\n... [truncated N chars] ...\n", N = length - limit);
// always valid UTF-8.
std::string CutMiddle(std::string_view text, std::size_t limit = 2000);

}  // namespace opverify
