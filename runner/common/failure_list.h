// The end of a run on the console: one line per failed case, as pytest's
// short test summary, capped so that a night of failures stays readable.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace opverify {

struct FailedCase {
  std::string id;          // "softmax/#1", as the reports show it
  std::string error_type;  // "AccuracyError"
  std::string message;     // the error message (any length, any lines)
  std::string ab_class;    // the A/B's classification ("real_defect"); "" without one
};

// The console shows at most this many failed cases by default.
inline constexpr std::size_t kFailureListCap = 50;

// "FAILED <id>  <ErrorType> (<A/B class>)  <message>" for each of the first `cap` cases
// (every part terminal-safe, the message on one line of at most 160 code
// points), then "... and N more (see <where>)" for the rest.
std::vector<std::string> FailureListLines(const std::vector<FailedCase>& failed, std::size_t cap,
                                          const std::string& where);

}  // namespace opverify
