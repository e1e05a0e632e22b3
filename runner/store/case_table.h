// The table of cases, one row a case, as a 1-D compound dataset (the H5TB
// "table" convention): /table in each shard, /cases in results.h5. h5py reads
// it as a numpy structured array (strings as bytes), pandas as a DataFrame:
//   pd.DataFrame(h5py.File("results.h5")["cases"][:])
// Columns are listed in schemas/hdf5-layout.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runner/common/status.h"
#include "runner/h5/h5.h"
#include "runner/store/case_record.h"

namespace opverify {

struct CaseRow {
  std::string case_id;
  std::string op_name;
  std::int64_t case_index = 0;
  std::string kind;  // RecordKindName: "case", "operator", "bench_item", "bench_shape"
  bool passed = false;
  std::string route;
  std::string error_type;
  // Of the output the route is about (the first failing one, else output 0);
  // NaN when the judge gave none.
  double max_abs_diff = 0;
  double max_rel_diff = 0;
  std::int32_t rank = 0;
  std::int32_t shard = 0;  // k of rank-NNNN.<k>.h5; 0 for rank-NNNN.h5
  std::int64_t n = 0;      // the case group's number in its shard
  std::string group;       // the case group's path in the file holding the table
  std::string device;
  bool tensors = false;           // whether outputs/<i>/{golden,actual} were stored
  std::string ab_classification;  // the A/B record's "classification"; empty without one
  // From the record's timings (same keys); NaN when absent.
  double wall_ms = 0;
  double compile_ms = 0;
  double construct_ms = 0;
  double golden_ms = 0;
  double impl_ms = 0;
  double judge_ms = 0;
};

// The row of `record`, stored as /cases/<n> of shard `shard` and reachable
// at `group` from the table's file.
CaseRow MakeCaseRow(const CaseRecord& record, int shard, std::int64_t n, std::string group,
                    bool tensors);

// Creates the table at `path` under `parent` holding `rows`: extendible
// (unlimited), in uncompressed chunks of `chunk_rows`. Uncompressed on
// purpose: a chunk is then rewritten in place when a row is added, never
// moved, so a crash cannot leave the table pointing at reused space.
Result<h5::Handle> CreateCaseTable(hid_t parent, const std::string& path,
                                   const std::vector<CaseRow>& rows, hsize_t chunk_rows);

// Grows the table by one row holding `row`.
Status AppendCaseRow(hid_t table, const CaseRow& row);

}  // namespace opverify
