// How close a judged output came to failing, measured against its own
// route's thresholds (docs/PRECISION.md), so that outputs are compared only
// with outputs judged by the same rules: report.html's "least precise".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reduce/run_model.h"

namespace opverify {

// The margin of one output: `ratio` is measured / allowed of the route's
// check that came closest (1 is at the threshold, above it failed), `check`
// names that check and its numbers ("MERE 3.1e-04 / 9.8e-04").
struct OutputMargin {
  std::string route;
  double ratio = 0;
  std::string check;
  bool passed = true;  // the output's verdict
};

// The margin of an output's verdict (a record's outputs[i]); nullopt for
// the routes with nothing to rank (bitwise and exact: any difference fails),
// a shape mismatch (no metrics) or metrics it does not recognise.
std::optional<OutputMargin> MarginOf(const OutputVerdict& verdict);

// An operator's closest output on one route.
struct LeastPreciseRow {
  std::string op;
  std::string case_id;
  OutputMargin margin;
};

// Per route (in name order), its operators ranked by their closest output on
// it, closest first, at most `per_route` each.
std::vector<LeastPreciseRow> LeastPrecise(const RunModel& run, std::size_t per_route);

// report.html's "Least precise operators" section: heading, note, table.
std::string LeastPreciseHtml(const RunModel& run);

}  // namespace opverify
