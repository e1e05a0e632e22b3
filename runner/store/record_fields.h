// The JSON types of a stored record's fields, as every reader of the store
// (the reports, results.h5, --resume, the Python module) uses them. A record
// is checked when it is read (run_records.h): one that a bug, a newer writer
// or a tampered shard made otherwise is a problem naming it and the field,
// never an exception in a reporter that takes the other records down with it.
// Fields may be missing (readers have defaults); present, they must have
// their type. An output's "metrics" may be null: the judge leaves them so for
// an output it could not compare (a ShapeMismatch).
#pragma once

#include <string>

#include "runner/common/status.h"
#include "runner/store/case_record.h"

namespace opverify {

// Ok, or InvalidInput "<where>: attribute '<name>': <JSON pointer> is a
// <type>, not <the types allowed>" for the first field of a wrong type.
Status CheckRecordFields(const CaseRecord& record, const std::string& where);

}  // namespace opverify
