#include "runner/verify/reference_trust.h"

#include <spdlog/spdlog.h>

#include <optional>
#include <vector>

#include "runner/judge/verdict_json.h"

namespace opverify {
namespace {

using nlohmann::json;

// The spec of a trust rerun: the failing run's seed alone, nothing but the judge.
OperatorSpec RerunSpec(const OperatorSpec& spec, const CaseOutcome& original) {
  OperatorSpec rerun = spec;
  rerun.only_seed = original.seed;
  rerun.config.probe = false;
  rerun.config.ghost_replay = false;
  return rerun;
}

// Each of `actuals` judged against the golden `goldens` gives, with the
// options the original judged it with: {"passed", "error_type", "error_msg",
// "outputs": [verdict...]}; null when the counts differ.
json JudgeEach(const std::vector<TensorView>& goldens, const std::vector<TensorView>& actuals,
               const std::vector<Verdict>& original) {
  if (goldens.size() != actuals.size() || goldens.empty()) return nullptr;
  json out = {{"passed", true},
              {"error_type", nullptr},
              {"error_msg", nullptr},
              {"outputs", json::array()}};
  for (std::size_t k = 0; k < goldens.size(); ++k) {
    const JudgeOptions options = k < original.size() ? original[k].options : JudgeOptions{};
    const Verdict verdict = Judge(goldens[k], actuals[k], options);
    if (!verdict.passed && out["passed"].get<bool>()) {
      out["passed"] = false;
      out["error_type"] = std::string(ErrorTypeName(verdict.error_type));
      out["error_msg"] =
          (goldens.size() > 1 ? "output " + std::to_string(k) + ": " : "") + verdict.error_msg;
    }
    out["outputs"].push_back(VerdictToJson(verdict));
  }
  return out;
}

std::vector<TensorView> Goldens(const CaseOutcome& c) {
  std::vector<TensorView> out;
  for (const auto& pair : c.tensors) out.push_back(pair.first);
  return out;
}

std::vector<TensorView> Actuals(const CaseOutcome& c) {
  std::vector<TensorView> out;
  for (const auto& pair : c.tensors) out.push_back(pair.second);
  return out;
}

json NotJudged(const CaseOutcome& c, const std::string& why) {
  return {{"judged", false},
          {"error_type", c.error_type.empty() ? json(nullptr) : json(c.error_type)},
          {"error_msg", c.error_type.empty() ? json(why) : json(CutMiddle(c.error_msg, 1000))}};
}

// The implementation's failing output against a float64 golden.
json Fp64Judgement(const OperatorSpec& spec, const RunOptions& options,
                   const CaseOutcome& original) {
  if (original.golden_precision == "fp64") {
    // The case was already judged against a float64 golden, and failed it.
    json own = {{"judged", true},
                {"source", "the case's own golden (golden_precision fp64)"},
                {"passed", false},
                {"error_type", original.error_type},
                {"error_msg", CutMiddle(original.error_msg, 1000)},
                {"outputs", json::array()}};
    for (const Verdict& v : original.outputs) own["outputs"].push_back(VerdictToJson(v));
    return own;
  }
  OperatorSpec rerun = RerunSpec(spec, original);
  rerun.config.golden_precision = "fp64";
  json judged;
  const std::vector<TensorView> failed = Actuals(original);
  const CaseOutcome run = RunCaseAlone(rerun, options, original.index, [&](const CaseOutcome& c) {
    if (c.golden_precision != "fp64" || c.tensors.empty()) return;
    judged = JudgeEach(Goldens(c), failed, original.outputs);
    if (judged.is_null()) return;
    judged["judged"] = true;
    judged["source"] = "a rerun: the reference on float64 inputs, rounded once";
    // Whether the rerun's own output was the same bytes (it is the failing output that is judged).
    judged["rerun_bitwise_equal"] = c.actual_sha256 == original.actual_sha256;
  });
  if (judged.is_null()) {
    return NotJudged(run, "the float64 rerun gave no outputs matching the failing run's to judge");
  }
  return judged;
}

// torch's own device run of the reference against the CPU golden, and the
// implementation's failing output against that device run.
json DeviceJudgement(const OperatorSpec& spec, const RunOptions& options,
                     const CaseOutcome& original, const std::string& backend) {
  if (backend == "cpu") {
    return {{"ran", false},
            {"why", "cpu backend: the reference's device run is the CPU golden itself"}};
  }
  OperatorSpec rerun = RerunSpec(spec, original);
  rerun.reference_as_impl = true;
  json judged;
  const std::vector<TensorView> failed = Actuals(original);
  const CaseOutcome run = RunCaseAlone(rerun, options, original.index, [&](const CaseOutcome& c) {
    if (c.tensors.empty()) return;
    judged = {{"ran", true},
              {"judged", true},
              {"device", c.device_name},
              {"golden_device", c.golden_device},
              {"passed", c.passed},
              {"error_type", c.passed ? json(nullptr) : json(c.error_type)},
              {"error_msg", c.passed ? json(nullptr) : json(CutMiddle(c.error_msg, 1000))},
              {"outputs", json::array()}};
    for (const Verdict& v : c.outputs) judged["outputs"].push_back(VerdictToJson(v));
    judged["implementation_matches"] = JudgeEach(Actuals(c), failed, original.outputs);
  });
  if (judged.is_null()) {
    json not_run = NotJudged(run, "torch's device run of the reference gave no outputs");
    not_run["ran"] = true;
    return not_run;
  }
  return judged;
}

// A string field, "" when absent or null.
std::string Text(const json& judgement, const char* key) {
  return judgement.is_object() && judgement.contains(key) && judgement[key].is_string()
             ? judgement[key].get<std::string>()
             : std::string();
}

bool Passed(const json& judgement, const char* key = "passed") {
  return judgement.is_object() && judgement.value("judged", true) && judgement.contains(key) &&
         judgement[key].is_boolean() && judgement[key].get<bool>();
}

}  // namespace

json JudgeReferenceTrust(const OperatorSpec& spec, const RunOptions& options,
                         const CaseOutcome& original, const std::string& backend) {
  json record;
  if (original.tensors.empty()) {
    record = {{"suspect", false},
              {"reason", "the failing outputs were not at hand"},
              {"fp64", nullptr},
              {"device_reference", nullptr}};
    return record;
  }
  spdlog::info(
      "[A/B] {} case {}: judging the implementation against a float64 golden, and torch's own "
      "device run "
      "of the reference against the CPU golden",
      spec.name, original.index + 1);
  const json fp64 = Fp64Judgement(spec, options, original);
  const json device = DeviceJudgement(spec, options, original, backend);
  const bool fp64_judged = fp64.value("judged", false);
  const bool fp64_passes = fp64_judged && Passed(fp64);
  const bool device_fails_golden =
      device.value("ran", false) && device.value("judged", false) && !Passed(device);
  const bool matches_device = device_fails_golden && device.contains("implementation_matches") &&
                              Passed(device["implementation_matches"]);
  const std::string device_name = Text(device, "device").empty() ? backend : Text(device, "device");
  std::string reason;
  bool suspect = false;
  if (fp64_passes) {
    suspect = true;
    reason =
        "the implementation's failing output passes against a float64 golden (the reference on "
        "float64 "
        "inputs, rounded once): the CPU golden is less precise than the implementation";
    if (matches_device) {
      reason += "; torch's own " + device_name +
                " run of the reference fails the CPU golden too (" + Text(device, "error_type") +
                "), and the implementation matches it";
    } else if (device_fails_golden) {
      reason += "; torch's own " + device_name + " run of the reference fails the CPU golden too";
    }
  } else if (!fp64_judged && matches_device) {
    suspect = true;
    reason = "no float64 golden could be made (" + Text(fp64, "error_msg") + "); torch's own " +
             device_name + " run of the reference fails the CPU golden too (" +
             Text(device, "error_type") + "), and the implementation matches it";
  } else if (fp64_judged) {
    reason = "the implementation fails the float64 golden too (" + Text(fp64, "error_type") + ")";
    if (device_fails_golden) {
      reason += "; torch's own " + device_name +
                " run of the reference fails the CPU golden as well, which "
                "does not excuse an output that is wrong against the exact answer";
    }
  } else {
    reason =
        "no float64 golden could be made, and torch's device run of the reference gives no "
        "evidence against "
        "the CPU golden";
  }
  record = {{"suspect", suspect}, {"reason", reason}, {"fp64", fp64}, {"device_reference", device}};
  return record;
}

}  // namespace opverify
