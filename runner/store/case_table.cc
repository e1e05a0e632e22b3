#include "runner/store/case_table.h"

#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

#include "runner/judge/json_number.h"

namespace opverify {
namespace {

using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A row as HDF5 reads it from memory: strings as char* (variable length).
struct PackedRow {
  const char* case_id;
  const char* op_name;
  std::int64_t case_index;
  const char* kind;
  std::int8_t passed;
  const char* route;
  const char* error_type;
  double max_abs_diff;
  double max_rel_diff;
  std::int32_t rank;
  std::int32_t shard;
  std::int64_t n;
  const char* group;
  const char* device;
  std::int8_t tensors;
  const char* ab_classification;
  double wall_ms;
  double compile_ms;
  double construct_ms;
  double golden_ms;
  double impl_ms;
  double judge_ms;
};

PackedRow Pack(const CaseRow& row) {
  PackedRow packed{};
  packed.case_id = row.case_id.c_str();
  packed.op_name = row.op_name.c_str();
  packed.case_index = row.case_index;
  packed.kind = row.kind.c_str();
  packed.passed = static_cast<std::int8_t>(row.passed);
  packed.route = row.route.c_str();
  packed.error_type = row.error_type.c_str();
  packed.max_abs_diff = row.max_abs_diff;
  packed.max_rel_diff = row.max_rel_diff;
  packed.rank = row.rank;
  packed.shard = row.shard;
  packed.n = row.n;
  packed.group = row.group.c_str();
  packed.device = row.device.c_str();
  packed.tensors = static_cast<std::int8_t>(row.tensors);
  packed.ab_classification = row.ab_classification.c_str();
  packed.wall_ms = row.wall_ms;
  packed.compile_ms = row.compile_ms;
  packed.construct_ms = row.construct_ms;
  packed.golden_ms = row.golden_ms;
  packed.impl_ms = row.impl_ms;
  packed.judge_ms = row.judge_ms;
  return packed;
}

// The compound type of PackedRow, in memory and in the file.
Result<h5::Handle> RowType() {
  Result<h5::Handle> text = h5::VariableStringType();
  if (!text.ok()) return text.status();
  const hid_t str = text->id();
  const hid_t i64 = H5T_NATIVE_INT64;
  const hid_t i32 = H5T_NATIVE_INT32;
  const hid_t i8 = H5T_NATIVE_INT8;
  const hid_t f64 = H5T_NATIVE_DOUBLE;
#define OPVERIFY_COLUMN(name, type) \
  { #name, offsetof(PackedRow, name), type }
  // HDF5 copies member types into the compound, so `text` may go after this.
  // One column a line, in the file's order.
  // clang-format off
  return h5::CreateCompoundType(sizeof(PackedRow), {OPVERIFY_COLUMN(case_id, str),
                                                    OPVERIFY_COLUMN(op_name, str),
                                                    OPVERIFY_COLUMN(case_index, i64),
                                                    OPVERIFY_COLUMN(kind, str),
                                                    OPVERIFY_COLUMN(passed, i8),
                                                    OPVERIFY_COLUMN(route, str),
                                                    OPVERIFY_COLUMN(error_type, str),
                                                    OPVERIFY_COLUMN(max_abs_diff, f64),
                                                    OPVERIFY_COLUMN(max_rel_diff, f64),
                                                    OPVERIFY_COLUMN(rank, i32),
                                                    OPVERIFY_COLUMN(shard, i32),
                                                    OPVERIFY_COLUMN(n, i64),
                                                    OPVERIFY_COLUMN(group, str),
                                                    OPVERIFY_COLUMN(device, str),
                                                    OPVERIFY_COLUMN(tensors, i8),
                                                    OPVERIFY_COLUMN(ab_classification, str),
                                                    OPVERIFY_COLUMN(wall_ms, f64),
                                                    OPVERIFY_COLUMN(compile_ms, f64),
                                                    OPVERIFY_COLUMN(construct_ms, f64),
                                                    OPVERIFY_COLUMN(golden_ms, f64),
                                                    OPVERIFY_COLUMN(impl_ms, f64),
                                                    OPVERIFY_COLUMN(judge_ms, f64)});
  // clang-format on
#undef OPVERIFY_COLUMN
}

// `object[key]` as a number, NaN when there is none.
double Field(const json& object, const char* key) {
  if (!object.is_object()) return kNaN;
  const auto found = object.find(key);
  return found == object.end() ? kNaN : JsonNumberValue(*found);
}

// The output the record's route is about: the first that failed, else 0.
const json* RouteOutput(const json& outputs) {
  if (!outputs.is_array() || outputs.empty()) return nullptr;
  for (const json& output : outputs) {
    if (output.is_object() && output.contains("passed") && output["passed"] == false)
      return &output;
  }
  return &outputs.front();
}

}  // namespace

CaseRow MakeCaseRow(const CaseRecord& record, int shard, std::int64_t n, std::string group,
                    bool tensors) {
  CaseRow row;
  row.case_id = record.case_id;
  row.op_name = record.op_name;
  row.case_index = record.case_index;
  row.kind = std::string(RecordKindName(record.kind));
  row.passed = record.passed;
  row.route = record.route;
  row.error_type = record.error_type;
  const json* output = RouteOutput(record.outputs);
  const json metrics =
      output != nullptr && output->is_object() ? output->value("metrics", json()) : json();
  row.max_abs_diff = Field(metrics, "max_abs_diff");
  row.max_rel_diff = Field(metrics, "max_rel_diff");
  row.rank = record.rank;
  row.shard = shard;
  row.n = n;
  row.group = std::move(group);
  row.device = record.device;
  row.tensors = tensors;
  if (record.ab.is_object() && record.ab.contains("classification") &&
      record.ab["classification"].is_string()) {
    row.ab_classification = record.ab["classification"].get<std::string>();
  }
  row.wall_ms = Field(record.timings, "wall_ms");
  row.compile_ms = Field(record.timings, "compile_ms");
  row.construct_ms = Field(record.timings, "construct_ms");
  row.golden_ms = Field(record.timings, "golden_ms");
  row.impl_ms = Field(record.timings, "impl_ms");
  row.judge_ms = Field(record.timings, "judge_ms");
  return row;
}

Result<h5::Handle> CreateCaseTable(hid_t parent, const std::string& path,
                                   const std::vector<CaseRow>& rows, hsize_t chunk_rows) {
  Result<h5::Handle> type = RowType();
  if (!type.ok()) return type.status();
  h5::DatasetOptions options;
  options.chunk = {chunk_rows};
  options.max_dims = {H5S_UNLIMITED};
  Result<h5::Handle> table = h5::CreateDataset(parent, path, type->id(), {rows.size()}, options);
  if (!table.ok() || rows.empty()) return table;
  std::vector<PackedRow> packed;
  packed.reserve(rows.size());
  for (const CaseRow& row : rows) packed.push_back(Pack(row));
  Status written = h5::WriteDataset(table->id(), type->id(), packed.data());
  if (!written.ok()) return written;
  return table;
}

Status AppendCaseRow(hid_t table, const CaseRow& row) {
  Result<std::vector<hsize_t>> dims = h5::DatasetDims(table);
  if (!dims.ok()) return dims.status();
  if (dims->size() != 1) {
    return Status::InvalidInput(h5::NameOf(table) + ": not a 1-D table");
  }
  const hsize_t rows = dims.value()[0];
  Status grown = h5::SetExtent(table, {rows + 1});
  if (!grown.ok()) return grown;
  Result<h5::Handle> type = RowType();
  if (!type.ok()) return type.status();
  const PackedRow packed = Pack(row);
  return h5::WriteDatasetBlock(table, type->id(), {rows}, {1}, &packed);
}

}  // namespace opverify
