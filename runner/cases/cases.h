// Cases: what one operator of a job runs, each with a stable id.
//
// A manifest entry's sweep ({"param": [values...], ...}) expands to one
// get_inputs keyword-argument object per case; an entry without a sweep runs
// the task's own cases, numbered; `edge_cases: true` adds the cases the
// executor generates (executor/opverify_runtime/edge_cases.py), named by
// label. The ids are what resume, the store and the reports key on: the same
// operator and parameters give the same id in every run. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace opverify {

// The cases of a sweep ({"param": [values...], ...}, validated): the
// cartesian product, one JSON object per case. Parameters in key order, the
// last one varying fastest; values in the order given.
std::vector<nlohmann::json> ExpandSweep(const nlohmann::json& sweep);

// How many cases ExpandSweep would make, without making them: the product
// of the values' counts, saturated at UINT64_MAX.
std::uint64_t SweepSize(const nlohmann::json& sweep);

// The first parameter of a sweep that lists a value twice, as "'<param>'
// lists <value> twice"; nullopt when each parameter's values are distinct
// (the schema's uniqueItems, checked here in n log n: see JobsSchema).
std::optional<std::string> RepeatedSweepValue(const nlohmann::json& sweep);

// A case's stable id: "<op>/<canonical params JSON>" for sweeps (params an
// object: nlohmann's compact dump, keys sorted), "<op>/#<N>" for the task's
// own cases (params null). `index` is 0-based, as get_input_groups() returns
// the cases; N = index + 1, the number verify_result.json's case_idx and
// `opverify verify --case N` use, so a person reads one numbering everywhere.
std::string CaseId(const std::string& op_name, const nlohmann::json& params, int index);

// A generated edge case's stable id (`edge_cases: true`): "<op>/edge/<label>",
// the label the executor gives it ("rows=1023", "nan_inf").
std::string EdgeCaseId(const std::string& op_name, const std::string& label);

}  // namespace opverify
