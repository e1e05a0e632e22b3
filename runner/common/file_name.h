// Names from outside (a manifest's job name, an operator name in a store)
// used as one component of a path: data, never a path of their own.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace opverify {

// `text` as a file name that stays in the folder it is put in: every byte
// but [A-Za-z0-9_-] and a '.' between two of them becomes '_', runs of '_'
// shrink to one, no leading '.', '-' or '_', at most `max_bytes` bytes;
// `fallback` when nothing is left. "../../X" -> "X", "a b/c" -> "a_b_c".
std::string SafeFileName(std::string_view text, std::size_t max_bytes = 64,
                         std::string_view fallback = "job");

}  // namespace opverify
