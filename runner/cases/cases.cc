#include "runner/cases/cases.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runner/common/json_text.h"

namespace opverify {

using nlohmann::json;

std::vector<json> ExpandSweep(const json& sweep) {
  std::vector<json> cases{json::object()};
  for (auto parameter = sweep.begin(); parameter != sweep.end(); ++parameter) {  // keys sorted
    std::vector<json> next;
    next.reserve(cases.size() * parameter.value().size());
    for (const json& partial : cases) {
      for (const json& value : parameter.value()) {
        json params = partial;
        params[parameter.key()] = value;
        next.push_back(std::move(params));
      }
    }
    cases = std::move(next);
  }
  return cases;
}

std::uint64_t SweepSize(const json& sweep) {
  std::uint64_t size = 1;
  for (auto parameter = sweep.begin(); parameter != sweep.end(); ++parameter) {
    const std::uint64_t values = parameter.value().size();
    if (values != 0 && size > UINT64_MAX / values) return UINT64_MAX;
    size *= values;
  }
  return size;
}

std::optional<std::string> RepeatedSweepValue(const json& sweep) {
  for (auto parameter = sweep.begin(); parameter != sweep.end(); ++parameter) {
    std::set<std::string> seen;
    for (const json& value : parameter.value()) {
      const std::string text = JsonText(value);
      if (!seen.insert(text).second) return "'" + parameter.key() + "' lists " + text + " twice";
    }
  }
  return std::nullopt;
}

std::string CaseId(const std::string& op_name, const json& params, int index) {
  if (params.is_null()) return op_name + "/#" + std::to_string(index + 1);
  return op_name + "/" + JsonText(params);
}

std::string EdgeCaseId(const std::string& op_name, const std::string& label) {
  return op_name + "/edge/" + label;
}

}  // namespace opverify
