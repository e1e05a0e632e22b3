#include "runner/store/case_record.h"

namespace opverify {

std::string_view RecordKindName(RecordKind kind) {
  switch (kind) {
    case RecordKind::kCase:
      return "case";
    case RecordKind::kOperator:
      return "operator";
    case RecordKind::kBenchItem:
      return "bench_item";
    case RecordKind::kBenchShape:
      return "bench_shape";
  }
  return "unknown";
}

std::optional<RecordKind> ParseRecordKind(std::string_view name) {
  for (RecordKind kind : {RecordKind::kCase, RecordKind::kOperator, RecordKind::kBenchItem,
                          RecordKind::kBenchShape}) {
    if (RecordKindName(kind) == name) return kind;
  }
  return std::nullopt;
}

}  // namespace opverify
