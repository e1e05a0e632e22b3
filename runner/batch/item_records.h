// The store's records of one work item (runner/store/case_record.h): each
// case, each benchmarked shape, and the records that are no case (the
// operator's facts, the benchmark's settings). What the worker stores, made
// from what the verification and the benchmark returned.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runner/manifest/manifest.h"
#include "runner/results/bench_result.h"
#include "runner/results/operator_outcome.h"
#include "runner/scheduler/work_plan.h"
#include "runner/store/case_record.h"
#include "runner/store/record_facts.h"

namespace opverify {

// The id of a record that is no case: "<op>/@<tag>/<item id>".
std::string FactId(const std::string& tag, const OperatorJob& op, const WorkItem& item);

// A record that is no case: `kind`'s facts about `item` of operator `op`,
// named by FactId, its content left for the caller's `extra`.
CaseRecord FactRecord(RecordKind kind, const std::string& tag, const OperatorJob& op,
                      const WorkItem& item, int rank);

// A benchmarked shape's row: "<case id>@bench".
CaseRecord ShapeRecord(const OperatorJob& op, const ShapeResult& shape, const std::string& case_id,
                       int rank);

// The record of case `c` of operator `op`, stored as `case_id`: everything
// but its A/B and tensors, which the worker adds.
CaseRecord CaseRecordOf(const CaseOutcome& c, const OperatorJob& op, const std::string& case_id,
                        int rank);

// The operator's facts (environment, lint, non_compute, how its executor
// started, the cases the selection left out) in a small side record, so
// that reports can rebuild verify_result.json from the store alone.
CaseRecord OperatorFactsRecord(const OperatorOutcome& outcome, const OperatorJob& op,
                               const WorkItem& item, int rank, const nlohmann::json& left_out);

}  // namespace opverify
