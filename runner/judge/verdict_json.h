// A Verdict as the JSON object of `opverify compare --json` (its schema is
// schemas/compare-result.schema.json) and as a short text a person reads.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runner/judge/judge.h"

namespace opverify {

// Non-finite numbers (a NaN golden in `worst`, an overflowing difference)
// are written as the strings "NaN", "Infinity" and "-Infinity", since JSON
// has no such numbers; readers turn them back.
nlohmann::json VerdictToJson(const Verdict& verdict);

// The metrics of one output, laid out as PRECISION.md's metrics section.
nlohmann::json MetricsToJson(const OutputMetrics& metrics);

// A JSON number, or the string form of a non-finite double.
nlohmann::json JsonNumber(double value);

// A few lines: the verdict, each standard's figures, the worst elements.
std::string VerdictSummary(const Verdict& verdict);

}  // namespace opverify
