#include "runner/config/operator_config.h"

namespace opverify {

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
  return Status::Ok();
}

}  // namespace opverify
