#include "runner/config/operator_config.h"

#include <algorithm>
#include <cctype>
#include <regex>

namespace opverify {

nlohmann::json AllowancesToJson(const std::vector<TorchAllowance>& allowances) {
  nlohmann::json out = nlohmann::json::array();
  for (const TorchAllowance& a : allowances) {
    nlohmann::json entry = {{"op", a.op}, {"why", a.why}, {"declared_at", a.declared_at}};
    if (!a.where.empty()) entry["where"] = a.where;
    if (!a.library.empty()) entry["library"] = a.library;
    out.push_back(std::move(entry));
  }
  return out;
}

namespace {

bool Blank(const std::string& text) {
  return std::all_of(text.begin(), text.end(),
                     [](unsigned char c) { return std::isspace(c) != 0; });
}

}  // namespace

bool IsTorchOperatorName(const std::string& op) {
  // The pattern of schemas/jobs.schema.json's "allow_torch" op.
  static const std::regex name(
      "aten::[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?|torch(\\.[A-Za-z_][A-Za-z0-9_]*)+|"
      "Tensor\\.[A-Za-z_][A-Za-z0-9_]*");
  return std::regex_match(op, name);
}

Result<std::vector<TorchAllowance>> ParseAllowances(const nlohmann::json& list,
                                                    const std::string& declared_at,
                                                    const std::string& library) {
  std::vector<TorchAllowance> out;
  if (!list.is_array()) return out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& entry = list[i];
    TorchAllowance a;
    a.op = entry.value("op", "");
    a.why = entry.value("why", "");
    a.where = entry.value("where", "");
    a.library = library;
    a.declared_at = declared_at + "/" + std::to_string(i);
    if (Blank(a.why)) {
      return Status::InvalidInput(a.declared_at + ": allowance of '" + a.op +
                                  "' gives no reason (\"why\"): an exception must be explained");
    }
    for (const TorchAllowance& earlier : out) {
      if (earlier.op == a.op && earlier.where == a.where) {
        return Status::InvalidInput(a.declared_at + ": allowance of '" + a.op + "'" +
                                    (a.where.empty() ? "" : " from '" + a.where + "'") +
                                    " repeats " + earlier.declared_at);
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

Result<TorchAllowance> ParseAllowanceFlag(const std::string& text) {
  const std::size_t equals = text.find('=');
  TorchAllowance a;
  if (equals != std::string::npos) {
    a.op = text.substr(0, equals);
    a.why = text.substr(equals + 1);
  }
  if (equals == std::string::npos || !IsTorchOperatorName(a.op) || Blank(a.why)) {
    return Status::InvalidInput("--allow-torch '" + text +
                                "': give OP=WHY, OP a torch operator (aten::NAME, torch.NAME, "
                                "Tensor.NAME), e.g. --allow-torch 'aten::sort=sorts on the host by "
                                "design' (an exception must be explained)");
  }
  a.declared_at = "--allow-torch " + a.op;
  return a;
}

Status ApplyManifestFields(const nlohmann::json& fields, const std::string& where, OperatorConfig* config) {
  if (fields.contains("non_compute")) config->non_compute = fields["non_compute"].get<bool>();
  if (fields.contains("standard")) {
    const std::optional<Standard> standard = ParseStandard(fields["standard"].get<std::string>());
    if (!standard) return Status::Internal(where + ": schema and judge disagree on 'standard'");
    config->standard = *standard;
  }
  if (fields.contains("precision_mode") && !fields["precision_mode"].is_null()) {
    const std::optional<PrecisionMode> mode = ParsePrecisionMode(fields["precision_mode"].get<std::string>());
    if (!mode) return Status::Internal(where + ": schema and judge disagree on 'precision_mode'");
    config->precision_mode = *mode;
  }
  config->timeout_s = fields.value("timeout_s", config->timeout_s);
  config->warmup_timeout_s = fields.value("warmup_timeout_s", config->warmup_timeout_s);
  config->lint = fields.value("lint", config->lint);
  config->repeat = fields.value("repeat", config->repeat);
  config->seeds = fields.value("seeds", config->seeds);
  config->golden_precision = fields.value("golden_precision", config->golden_precision);
  config->edge_cases = fields.value("edge_cases", config->edge_cases);
  config->runtime_checks = fields.value("runtime_checks", config->runtime_checks);
  config->ghost_replay = fields.value("ghost_replay", config->ghost_replay);
  config->library = fields.value("library", config->library);
  config->python_path = fields.value("python_path", config->python_path);
  if (fields.contains("preload")) config->preload = fields["preload"].get<std::vector<std::string>>();
  return CheckPreload(*config, where);
}

Status CheckPreload(const OperatorConfig& config, const std::string& where) {
  const std::vector<std::string>& library = config.library;
  for (const std::string& module : config.PreloadModules()) {
    const bool ours = std::any_of(library.begin(), library.end(), [&](const std::string& package) {
      return module == package || module.rfind(package + ".", 0) == 0;
    });
    if (ours) continue;
    std::string declared;
    for (const std::string& package : library) declared += (declared.empty() ? "" : ", ") + package;
    return Status::InvalidInput(where + ": preload '" + module +
                                "' is not a declared library package or a submodule of one (library: " +
                                (declared.empty() ? "none" : declared) +
                                "): a spare executor imports only the library's own code");
  }
  return Status::Ok();
}

}  // namespace opverify
