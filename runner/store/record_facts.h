// What the JSON columns of a stored record hold (case_record.h), as types.
// The JSON on disk is unchanged: these are its fields, read once where the
// records are read (reduce/run_model.cc), so that the reports read fields,
// not keys. Each type's fields are listed once (runner/common/json_fields.h);
// a type some writer builds from its struct (OperatorFacts) has a to_json
// from the same list, so that writing and reading cannot drift. A type that
// is a view of a richer document another part writes (the A/B record, the
// reference trust) keeps that document as stored for the reports that copy
// it whole. Types are checked before (record_fields.h): a field of another
// type never reaches these readers.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/failure_type.h"
#include "runner/store/case_record.h"

namespace opverify {

// One judgement of a reference trust record ("fp64" or "device_reference").
struct TrustJudgement {
  std::optional<bool> ran;     // false: not run (`why` says why)
  std::optional<bool> judged;  // false: run, not judged (error_type, error_msg say why)
  std::string why;
  std::string error_type;
  std::string error_msg;
  bool passed = false;
};
void from_json(const nlohmann::json& j, TrustJudgement& t);

// The A/B's reference trust record (runner/verify/reference_trust.h).
struct ReferenceTrust {
  std::string reason;
  std::optional<TrustJudgement> fp64;              // when stored as an object
  std::optional<TrustJudgement> device_reference;  // when stored as an object
  nlohmann::json stored;                           // the whole record, as stored
};
void from_json(const nlohmann::json& j, ReferenceTrust& t);

// The A/B record of an accuracy failure (CaseRecord::ab), or the record of a
// case whose class is inherited from an earlier case's A/B.
struct AbRecord {
  std::optional<std::string> classification;  // unset where the A/B could not classify
  std::string inherited_from;    // the case whose A/B the class is from; "" for its own
  nlohmann::json bitwise_equal;  // {"fresh", "same_cache"}; null without
  nlohmann::json attempts = nlohmann::json::array();  // each re-run, as stored
  std::optional<ReferenceTrust> reference_trust;      // when stored as an object
  // "classification"'s JSON: the class, or null.
  nlohmann::json ClassificationJson() const;
};
void from_json(const nlohmann::json& j, AbRecord& ab);

// A case's timings (CaseRecord::timings), in milliseconds; 0 where not timed.
struct CaseTimings {
  double wall_ms = 0, construct_ms = 0, probe_ms = 0, compile_ms = 0, golden_ms = 0, impl_ms = 0,
         judge_ms = 0;
  // The implementation executor's checks around its forward: an override's
  // ATen baseline, poisoning the free device memory, judging the runtime
  // evidence, the ghost replay.
  double checks_ms = 0;
  int kernels_compiled = 0;  // Triton compilations in compile_ms
  // What of those Triton's disk cache served (loaded, not compiled); unset
  // where the executor could not tell (no compile listener).
  std::optional<double> compile_cached_ms;
  std::optional<int> kernels_cached;
};
void from_json(const nlohmann::json& j, CaseTimings& t);

// A number as the judge writes it (runner/judge/json_number.h): a JSON
// number, or the text of a non-finite one.
struct JudgeNumber {
  double value = std::numeric_limits<double>::quiet_NaN();  // NaN when absent
  bool is_number = false;  // written as a JSON number (not absent, not text)
};
void from_json(const nlohmann::json& j, JudgeNumber& n);

struct EcoFigures {
  JudgeNumber matched_ratio, over_count;
};
struct NpuFigures {
  JudgeNumber mere, rel_threshold, matched_ratio, max_error_cap_violation_count;
};
struct MereMareFigures {
  JudgeNumber mere, mare, threshold;
  std::optional<bool> passed;
};
void from_json(const nlohmann::json& j, EcoFigures& f);
void from_json(const nlohmann::json& j, NpuFigures& f);
void from_json(const nlohmann::json& j, MereMareFigures& f);

// An output's metrics (docs/JUDGE.md), as far as the reports read them.
struct OutputFigures {
  std::optional<double> max_rel_diff;  // when a JSON number
  JudgeNumber max_abs_diff;
  std::optional<EcoFigures> eco;             // when stored as an object
  std::optional<NpuFigures> npu_benchmark;   // when stored as an object
  std::optional<MereMareFigures> mere_mare;  // when stored as an object
};
void from_json(const nlohmann::json& j, OutputFigures& f);

// One output's verdict (CaseRecord::outputs, runner/judge/verdict_json.h).
struct OutputVerdict {
  bool passed = false;
  std::optional<std::string> dtype, route, standard, error_type;  // unset where null
  std::optional<std::vector<std::int64_t>> shape;
  std::optional<OutputFigures> metrics;  // unset where the judge could not compare
};
void from_json(const nlohmann::json& j, OutputVerdict& v);

// An operator's facts: the extra of its RecordKind::kOperator records
// (runner/batch/item_records.cc writes them from this type).
struct OperatorFacts {
  nlohmann::json environment;  // the executor's: device, torch, triton, ...; null unknown
  nlohmann::json lint;         // the static lint's result; null without
  bool non_compute = false;
  std::optional<bool> non_compute_given;  // the manifest set non_compute itself
  std::optional<int> case_count;          // the cases its task has
  std::optional<std::string> impl_name;
  std::string task_file;
  bool lint_enabled = true;
  nlohmann::json allow_torch;  // the declared allowances (runner/results/waivers.h)
  bool allow_torch_checked = false;
  nlohmann::json startup;  // how its implementation executor started
  // The cases the selection left out of it: case id -> why (absent when none).
  std::map<std::string, std::string> left_out;
};
void to_json(nlohmann::json& j, const OperatorFacts& f);
void from_json(const nlohmann::json& j, OperatorFacts& f);

// A stored case's JSON columns, read once.
struct CaseContent {
  FailureType error_type;  // CaseRecord::error_type's kind; kNone when passed
  CaseTimings timings;
  std::optional<AbRecord> ab;          // when CaseRecord::ab is an object
  std::vector<OutputVerdict> outputs;  // per output
  // extra.details.waivers: the declared exceptions the case used (waivers.h).
  nlohmann::json waivers = nlohmann::json::array();
};
CaseContent ReadCaseContent(const CaseRecord& record);

}  // namespace opverify
