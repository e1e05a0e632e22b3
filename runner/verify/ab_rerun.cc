#include "runner/verify/ab_rerun.h"

#include <spdlog/spdlog.h>
#include <stdlib.h>

#include <filesystem>

#include "runner/common/utf8.h"
#include "runner/verify/reference_trust.h"

namespace fs = std::filesystem;

namespace opverify {
namespace {

using nlohmann::json;

struct Attempt {
  CaseOutcome outcome;
  nlohmann::json environment;
};

// Runs case `index` alone in a new executor with `options`.
Attempt RunAlone(const OperatorSpec& spec, const RunOptions& options, int index) {
  Attempt attempt;
  attempt.outcome = RunCaseAlone(spec, options, index, nullptr, &attempt.environment);
  return attempt;
}

// Two runs agree when they end the same way with bitwise-equal outputs.
bool Agree(const CaseOutcome& a, const CaseOutcome& b) {
  return a.error_type == b.error_type && a.actual_sha256 == b.actual_sha256;
}

// An attempt as the record keeps it; how a failing one failed, cut short (an
// attempt that crashed or timed out says why, not only that it disagreed).
json Describe(const std::string& label, const CaseOutcome& c, const std::string& cache_dir) {
  constexpr std::size_t kMessageChars = 600;
  json attempt = {{"label", label},
                  {"passed", c.passed},
                  {"error_type", c.error_type.empty() ? json(nullptr) : json(c.error_type)},
                  {"actual_sha256", c.actual_sha256},
                  {"cache_dir", cache_dir}};
  if (!c.passed && !c.error_msg.empty())
    attempt["error_msg"] = Utf8Prefix(c.error_msg, kMessageChars);
  return attempt;
}

std::optional<std::string> MakeFreshDir(const std::string& parent) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  std::string pattern = (fs::path(parent) / "fresh_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) return std::nullopt;
  return pattern;
}

// The backend the case ran on: the executor's fingerprint says it; else the one asked for.
std::string BackendOf(const AbRequest& request) {
  const json& env = request.original_environment;
  if (env.is_object() && env.contains("device") && env["device"].is_object() &&
      env["device"].contains("backend") && env["device"]["backend"].is_string()) {
    return env["device"]["backend"].get<std::string>();
  }
  return request.options.backend;
}

}  // namespace

json RunAb(const AbRequest& request, const CaseOutcome& original) {
  const OperatorSpec& spec = *request.spec;
  json record;
  std::optional<std::string> fresh = MakeFreshDir(request.fresh_cache_parent);
  if (!fresh) {
    record["classification"] = nullptr;
    record["error"] = "cannot create a fresh cache folder under " + request.fresh_cache_parent;
    return record;
  }
  RunOptions fresh_options = request.options;
  for (auto it = fresh_options.executor.env.begin(); it != fresh_options.executor.env.end();) {
    it = it->first == "TRITON_CACHE_DIR" || it->first == "TORCHINDUCTOR_CACHE_DIR" ||
                 it->first == "HOME"
             ? fresh_options.executor.env.erase(it)
             : it + 1;
  }
  fresh_options.executor.env.emplace_back("TRITON_CACHE_DIR", *fresh + "/triton");
  fresh_options.executor.env.emplace_back("TORCHINDUCTOR_CACHE_DIR", *fresh + "/inductor");
  fresh_options.executor.env.emplace_back("HOME",
                                          *fresh + "/home");  // the libraries' own caches too

  spdlog::info("[A/B] {} case {}: re-running on a fresh cache, then on the original one", spec.name,
               original.index + 1);
  Attempt on_fresh = RunAlone(spec, fresh_options, original.index);
  Attempt on_same = RunAlone(spec, request.options, original.index);

  const bool fresh_equal = Agree(original, on_fresh.outcome);
  const bool same_equal = Agree(original, on_same.outcome);
  std::string classification;
  if (!same_equal) {
    classification = "nondeterministic";
  } else if (!fresh_equal) {
    classification = "compiler_suspect";
  } else {
    classification = "real_defect";
  }
  // Only an output that reproduces bit for bit is examined for reference trust:
  // the other classes already point at the compiler or the kernel's races.
  record["reference_trust"] = nullptr;
  if (classification == "real_defect") {
    record["reference_trust"] =
        JudgeReferenceTrust(spec, request.options, original, BackendOf(request));
    if (record["reference_trust"].value("suspect", false)) classification = "reference_suspect";
  }
  record["classification"] = classification;
  // The fresh attempt really compiled afresh: its cache was the new folder,
  // not the original one (a persistent --cache-dir), and no remote cache
  // stood behind it (the executor's own account, environment.py).
  const json& fresh_cache = on_fresh.environment.is_object()
                                ? on_fresh.environment.value("cache", json::object())
                                : json::object();
  record["fresh_effective"] = fresh_cache.is_object() &&
                              fresh_cache.value("fresh_effective", false) &&
                              fresh_cache.value("dir", std::string()) == *fresh + "/triton" &&
                              *fresh + "/triton" != request.original_cache_dir;
  record["bitwise_equal"] = {{"fresh", fresh_equal}, {"same_cache", same_equal}};
  record["attempts"] =
      json::array({Describe("original", original, request.original_cache_dir),
                   Describe("fresh_cache", on_fresh.outcome, *fresh + "/triton"),
                   Describe("same_cache", on_same.outcome, request.original_cache_dir)});
  if (classification == "compiler_suspect") {
    record["kept_cache_dir"] = *fresh;
    record["environments"] = {{"original", request.original_environment},
                              {"fresh", on_fresh.environment}};
  } else {
    std::error_code ec;
    fs::remove_all(*fresh, ec);
    record["kept_cache_dir"] = nullptr;
  }
  spdlog::info("[A/B] {} case {}: {}", spec.name, original.index + 1, classification);
  return record;
}

}  // namespace opverify
