// "Did you mean ...?": the known names nearest to a word a user mistyped (a
// flag, a subcommand, an operator), by edit distance with transpositions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace opverify {

// The edit distance between `a` and `b`: insertions, deletions, substitutions
// and swaps of two neighbouring characters, each 1 (optimal string alignment).
std::size_t EditDistance(const std::string& a, const std::string& b);

// The nearest of `candidates` (all at the smallest distance, at most `most`,
// in the candidates' order) when within a third of `word`'s length (at
// least 2 edits; case ignored); none otherwise.
std::vector<std::string> ClosestNames(const std::string& word,
                                      const std::vector<std::string>& candidates,
                                      std::size_t most = 3);

// "did you mean 'a' or 'b'?"; "" without a name.
std::string DidYouMean(const std::vector<std::string>& names);

}  // namespace opverify
