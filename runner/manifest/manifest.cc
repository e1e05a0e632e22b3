#include "runner/manifest/manifest.h"

#include <fnmatch.h>
#include <glob.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <utility>

#include "runner/common/sha256.h"
#include "runner/common/strings.h"
#include "runner/common/user_file.h"
#include "runner/common/utf8.h"
#include "runner/manifest/manifest_document.h"

namespace opverify {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kTaskSuffix = "_torch.py";
// The schema's maxLength of "name": <name>_<impl_name>.py and the store's
// names made from it stay under NAME_MAX (255).
constexpr std::size_t kMaxNameChars = 128;
// A task file larger than this is not hashed for its anchor.
constexpr std::size_t kMaxTaskBytes = 64u << 20;

using manifest_internal::At;
using manifest_internal::Join;
using manifest_internal::ManifestFile;
using manifest_internal::ReadJson;
using manifest_internal::ValidateAgainstSchema;

// `next` (a path inside a manifest) as seen from the working directory and
// absolutely, given the manifest it is relative to.
ManifestFile Beside(const ManifestFile& manifest, const std::string& next) {
  return {(fs::path(manifest.display).parent_path() / next).lexically_normal().string(),
          (manifest.absolute.parent_path() / next).lexically_normal()};
}

// Operator and implementation names become file names and case-id prefixes:
// the schema's "name" pattern, for names that come from discovered files.
bool IsOperatorName(const std::string& name) {
  if (name.empty() || name.front() == '-' || name.size() > kMaxNameChars) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

// ---- Resolution ----------------------------------------------------------

// Defaults, then the entry's own fields over them; "bench" merges key by key.
json ApplyDefaults(const json& defaults, const json& entry) {
  json merged = defaults;
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    if (it.key() == "bench" && merged.contains("bench")) {
      merged["bench"].update(it.value());
    } else {
      merged[it.key()] = it.value();
    }
  }
  return merged;
}

// An operator resolved, and the include chain that brought its manifest in
// (empty for the top manifest), for duplicate messages.
struct Resolved {
  OperatorJob job;
  std::string via;  // "a.json -> b.json"
};

class Resolver {
 public:
  explicit Resolver(const ManifestLimits& limits) : limits_(limits) {}
  Status Load(const ManifestFile& file, JobManifest* top);

  std::vector<OperatorJob> TakeOperators() {
    std::vector<OperatorJob> out;
    out.reserve(resolved_.size());
    for (Resolved& r : resolved_) out.push_back(std::move(r.job));
    return out;
  }

  // The "libraries" declarations of every file loaded, added to each operator
  // that lists the package; InvalidInput for a package no operator lists.
  Status ApplyLibraryDeclarations();

 private:
  Status LoadIncludes(const ManifestFile& file, const json& document);
  Status LoadLibraries(const ManifestFile& file, const json& document);
  Status AddExplicit(const ManifestFile& file, const std::string& pointer, const json& fields);
  Status AddDiscovered(const ManifestFile& file, const std::string& pointer, const json& fields);
  Status AddOverride(const ManifestFile& file, const std::string& pointer, const json& fields);
  // `dir` absolute, `display_dir` as messages name it.
  Status Add(const ManifestFile& file, const std::string& pointer, const json& fields,
             const std::string& name, const fs::path& dir, const fs::path& display_dir);
  // What every form shares: the settings, the sweep, the duplicate check.
  Status Finish(const ManifestFile& file, const std::string& pointer, const json& fields,
                OperatorJob job);
  std::string Via() const { return stack_display_.size() > 1 ? Join(stack_display_, " -> ") : ""; }

  Status CheckSweepSize(const std::string& where, const json& fields, const std::string& name);

  const ManifestLimits limits_;
  std::uint64_t job_cases_cap_ = ManifestLimits::kDefaultJobCases;
  std::uint64_t job_cases_ = 0;  // sweep cases of the operators resolved so far
  std::vector<Resolved> resolved_;
  std::map<std::string, std::size_t> by_name_;  // index into resolved_
  std::vector<fs::path> stack_;                 // manifests being loaded (canonical), for cycles
  std::vector<std::string> stack_display_;
  // "libraries": package -> its allowances (each file's, in load order), and
  // where the first declaration of each package is, for messages.
  std::map<std::string, std::vector<TorchAllowance>> library_allowances_;
  std::map<std::string, std::string> library_declared_at_;
  // Where the entry being resolved got its "allow_torch": its own, or its file's defaults.
  std::string allow_torch_at_;
};

Status Resolver::Load(const ManifestFile& file, JobManifest* top) {
  Result<json> document = ReadJson(file);
  if (!document.ok()) return document.status();
  if (Status valid = ValidateAgainstSchema(file, document.value()); !valid.ok()) return valid;
  const json& doc = document.value();
  if (top) {
    top->name = doc["name"].get<std::string>();
    top->description = doc.value("description", "");
    job_cases_cap_ =
        limits_.job_cases.value_or(doc.value("max_job_cases", ManifestLimits::kDefaultJobCases));
  }

  std::error_code ec;  // the file was read: it exists; the canonical form is only for cycles
  const fs::path canonical = fs::weakly_canonical(file.absolute, ec);
  stack_.push_back(ec ? file.absolute : canonical);
  stack_display_.push_back(file.display);
  if (Status included = LoadIncludes(file, doc); !included.ok()) return included;
  if (Status libraries = LoadLibraries(file, doc); !libraries.ok()) return libraries;

  const json defaults = doc.value("defaults", json::object());
  const json& operators = doc["operators"];
  for (std::size_t i = 0; i < operators.size(); ++i) {
    const std::string pointer = "/operators/" + std::to_string(i);
    const json fields = ApplyDefaults(defaults, operators[i]);
    allow_torch_at_ = file.display + ":" +
                      (operators[i].contains("allow_torch") ? pointer : "/defaults") +
                      "/allow_torch";
    Status added = operators[i].contains("glob") ? AddDiscovered(file, pointer, fields)
                                                 : AddExplicit(file, pointer, fields);
    if (!added.ok()) return added;
  }
  stack_.pop_back();
  stack_display_.pop_back();
  return Status::Ok();
}

Status Resolver::LoadIncludes(const ManifestFile& file, const json& document) {
  if (!document.contains("include")) return Status::Ok();
  const json& includes = document["include"];
  for (std::size_t i = 0; i < includes.size(); ++i) {
    const std::string where = At(file.display, "/include/" + std::to_string(i));
    const ManifestFile included = Beside(file, includes[i].get<std::string>());
    if (Status regular = CheckRegularFile(included.absolute.string(), "included manifest");
        !regular.ok()) {
      if (regular.code() == Status::Code::kNotFound) {
        return Status::NotFound(where + ": included manifest " + included.display + " not found");
      }
      return Status::InvalidInput(where + ": " + included.display + ": " +
                                  regular.message().substr(included.absolute.string().size() + 2));
    }
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(included.absolute, ec);
    if (ec) canonical = included.absolute;
    if (std::find(stack_.begin(), stack_.end(), canonical) != stack_.end()) {
      return Status::InvalidInput(where + ": include cycle: " + Join(stack_display_, " -> ") +
                                  " -> " + included.display);
    }
    if (Status loaded = Load(included, nullptr); !loaded.ok()) return loaded;
  }
  return Status::Ok();
}

Status Resolver::LoadLibraries(const ManifestFile& file, const json& document) {
  if (!document.contains("libraries")) return Status::Ok();
  for (const auto& [package, declared] : document["libraries"].items()) {
    const std::string at = file.display + ":/libraries/" + package;
    Result<std::vector<TorchAllowance>> allowed =
        ParseAllowances(declared.value("allow_torch", json::array()), at + "/allow_torch", package);
    if (!allowed.ok()) return allowed.status();
    std::vector<TorchAllowance>& all = library_allowances_[package];
    for (TorchAllowance& a : allowed.value()) {
      for (const TorchAllowance& earlier : all) {
        if (earlier.op == a.op && earlier.where == a.where) {
          return Status::InvalidInput(a.declared_at + ": allowance of '" + a.op +
                                      "' for library '" + package + "' repeats " +
                                      earlier.declared_at);
        }
      }
      all.push_back(std::move(a));
    }
    library_declared_at_.emplace(package, at);
  }
  return Status::Ok();
}

Status Resolver::ApplyLibraryDeclarations() {
  for (const auto& [package, allowed] : library_allowances_) {
    bool listed = false;
    for (Resolved& r : resolved_) {
      const std::vector<std::string>& library = r.job.config.library;
      if (std::find(library.begin(), library.end(), package) == library.end()) continue;
      listed = true;
      r.job.config.allow_torch.insert(r.job.config.allow_torch.end(), allowed.begin(),
                                      allowed.end());
    }
    if (!listed) {
      return Status::InvalidInput(library_declared_at_[package] +
                                  ": no operator of the job lists '" + package +
                                  "' in \"library\" (a typo?)");
    }
  }
  return Status::Ok();
}

Status Resolver::AddExplicit(const ManifestFile& file, const std::string& pointer,
                             const json& fields) {
  if (fields.contains("override")) return AddOverride(file, pointer, fields);
  const ManifestFile dir = Beside(file, fields["dir"].get<std::string>());
  return Add(file, pointer, fields, fields["name"].get<std::string>(), dir.absolute, dir.display);
}

// `path` as a glob pattern that matches only itself: the manifest's folder
// may hold *, ? or [ in its name.
std::string GlobEscaped(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// glob(3)'s matches, released when done.
class GlobMatches {
 public:
  explicit GlobMatches(const std::string& pattern)
      : rc_(glob(pattern.c_str(), 0, nullptr, &glob_)) {}
  ~GlobMatches() { globfree(&glob_); }
  GlobMatches(const GlobMatches&) = delete;
  GlobMatches& operator=(const GlobMatches&) = delete;

  int rc() const { return rc_; }
  std::vector<std::string> paths() const {
    if (rc_ != 0) return {};
    return std::vector<std::string>(glob_.gl_pathv, glob_.gl_pathv + glob_.gl_pathc);
  }

 private:
  glob_t glob_{};
  int rc_;
};

Status Resolver::AddDiscovered(const ManifestFile& file, const std::string& pointer,
                               const json& fields) {
  const std::string where = At(file.display, pointer);
  const std::string pattern = fields["glob"].get<std::string>();
  // An absolute pattern is used as given; a relative one from the manifest's folder.
  const bool absolute = !pattern.empty() && pattern.front() == '/';
  const fs::path base = absolute ? fs::path("/") : file.absolute.parent_path();
  const GlobMatches matches(absolute ? pattern : GlobEscaped(base.string() + "/") + pattern);
  if (matches.rc() != 0 && matches.rc() != GLOB_NOMATCH) {
    return Status::IoError(where + ": glob '" + pattern + "' failed (glob(3) error " +
                           std::to_string(matches.rc()) + ")");
  }
  const std::vector<std::string> excludes = fields.value("exclude", std::vector<std::string>{});
  std::map<std::string, fs::path> found;  // name -> its folder, sorted by name
  for (const std::string& match : matches.paths()) {
    const fs::path task(match);
    std::error_code ec;
    if (!fs::is_regular_file(task, ec)) continue;
    const std::string file_name = task.filename().string();
    const std::string name = file_name.substr(0, file_name.size() - kTaskSuffix.size());
    const bool excluded = std::any_of(excludes.begin(), excludes.end(), [&](const std::string& e) {
      return fnmatch(e.c_str(), name.c_str(), 0) == 0;
    });
    if (excluded) continue;
    if (!IsOperatorName(name)) {
      return Status::InvalidInput(
          Printf("%s: glob '%s' found %s, whose operator name '%s' is not a name (letters, "
                 "digits, _ and -, at most 128)",
                 where.c_str(), pattern.c_str(), match.c_str(), name.c_str()));
    }
    found.emplace(name, task.parent_path());
  }
  if (found.empty()) {
    return Status::NotFound(where + ": glob '" + pattern + "' finds no task file" +
                            (excludes.empty() ? "" : " (after exclude)"));
  }
  for (const auto& [name, dir] : found) {
    const fs::path display_dir =
        absolute ? dir
                 : (fs::path(file.display).parent_path() / dir.lexically_relative(base))
                       .lexically_normal();
    if (Status added = Add(file, pointer, fields, name, dir, display_dir); !added.ok()) {
      return added;
    }
  }
  return Status::Ok();
}

Status Resolver::Add(const ManifestFile& file, const std::string& pointer, const json& fields,
                     const std::string& name, const fs::path& dir, const fs::path& display_dir) {
  const std::string where = At(file.display, pointer);
  OperatorJob job;
  job.name = name;
  job.code.impl_name = fields.value("impl_name", job.code.impl_name);
  const fs::path absolute_dir = fs::absolute(dir).lexically_normal();
  job.code.task_file = (absolute_dir / (name + std::string(kTaskSuffix))).string();
  job.code.impl_file = (absolute_dir / (name + "_" + job.code.impl_name + ".py")).string();
  // Executors get paths as JSON text (UTF-8 only): such a folder reached them as "no such file".
  if (const std::string shown = ValidUtf8(absolute_dir.string()); shown != absolute_dir.string())
    return Status::InvalidInput(where + ": operator '" + name + "': its folder " + shown +
                                " is not valid UTF-8 (U+FFFD marks the bytes); rename it");
  for (const auto& [path, role] : {std::pair{job.code.task_file, "task file"},
                                   std::pair{job.code.impl_file, "implementation file"}}) {
    if (Status regular = CheckRegularFile(path, role); !regular.ok()) {
      const std::string shown = (display_dir / fs::path(path).filename()).string();
      if (regular.code() == Status::Code::kNotFound) {
        return Status::NotFound(Printf("%s: %s %s not found", where.c_str(), role, shown.c_str()));
      }
      return Status::InvalidInput(where + ": " + shown + ": " +
                                  regular.message().substr(path.size() + 2));
    }
  }
  return Finish(file, pointer, fields, std::move(job));
}

// Every "$name" an override's arguments use, with the JSON pointer of its place.
void CollectParamRefs(const json& value, const std::string& pointer,
                      std::vector<std::pair<std::string, std::string>>* refs) {
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (!text.empty() && text.front() == '$') refs->emplace_back(text.substr(1), pointer);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i)
      CollectParamRefs(value[i], pointer + "/" + std::to_string(i), refs);
  } else if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it)
      CollectParamRefs(it.value(), pointer + "/" + it.key(), refs);
  }
}

Status Resolver::AddOverride(const ManifestFile& file, const std::string& pointer,
                             const json& fields) {
  const std::string where = At(file.display, pointer);
  if (fields.value("library", std::vector<std::string>{}).empty()) {
    return Status::InvalidInput(where +
                                ": an override operator needs 'library' (here or in defaults): the "
                                "packages whose kernels must do the work");
  }
  const json& spec = fields["override"];
  const json sweep = fields.value("sweep", json::object());
  std::vector<std::pair<std::string, std::string>> refs;
  for (const char* key : {"args", "kwargs"}) {
    if (spec.contains(key)) CollectParamRefs(spec[key], pointer + "/override/" + key, &refs);
  }
  for (const auto& [param, place] : refs) {
    if (!sweep.contains(param)) {
      return Status::InvalidInput(At(file.display, place) + ": '$" + param +
                                  "' names no sweep parameter" +
                                  (sweep.empty() ? " (the entry has no sweep)" : ""));
    }
  }
  OperatorJob job;
  job.name = fields["name"].get<std::string>();
  job.code.override_spec = spec;
  json settings = fields;
  settings.erase("edge_cases");  // generated from get_inputs' parameters, which an override has not
  return Finish(file, pointer, settings, std::move(job));
}

Status Resolver::Finish(const ManifestFile& file, const std::string& pointer, const json& fields,
                        OperatorJob job) {
  const std::string where = At(file.display, pointer);
  const std::string name = job.name;
  if (Status judged = ApplyManifestFields(fields, where, &job.config); !judged.ok()) return judged;
  if (fields.contains("allow_torch")) {
    Result<std::vector<TorchAllowance>> allowed =
        ParseAllowances(fields["allow_torch"], allow_torch_at_);
    if (!allowed.ok()) return allowed.status();
    job.config.allow_torch = std::move(allowed).value();
  }
  for (std::string& folder : job.config.python_path) {
    const ManifestFile found = Beside(file, folder);
    if (!fs::is_directory(found.absolute)) {
      return Status::NotFound(where + ": python_path folder " + found.display + " not found");
    }
    folder = found.absolute.string();
  }
  if (fields.contains("bench")) {
    if (Status benched = ApplyManifestBench(fields["bench"], where, &job.bench); !benched.ok()) return benched;
  }
  job.tags = fields.value("tags", job.tags);
  if (fields.contains("task_sha256")) job.task_sha256 = fields["task_sha256"].get<std::string>();
  if (Status sized = CheckSweepSize(where, fields, name); !sized.ok()) return sized;
  if (fields.contains("sweep")) job.cases = ExpandSweep(fields["sweep"]);
  job.source = file.display + ":" + pointer;

  const std::string via = Via();
  if (const auto first = by_name_.find(name); first != by_name_.end()) {
    const Resolved& earlier = resolved_[first->second];
    return Status::InvalidInput(where + (via.empty() ? "" : " (included via " + via + ")") +
                                ": duplicate operator '" + name + "': already listed at " +
                                earlier.job.source +
                                (earlier.via.empty() ? "" : " (included via " + earlier.via + ")"));
  }
  by_name_.emplace(name, resolved_.size());
  resolved_.push_back({std::move(job), via});
  return Status::Ok();
}

// The sweep's size against the operator's cap and what is left of the
// job's, before it is expanded.
Status Resolver::CheckSweepSize(const std::string& where, const json& fields,
                                const std::string& name) {
  if (!fields.contains("sweep")) return Status::Ok();
  const std::uint64_t size = SweepSize(fields["sweep"]);
  const std::uint64_t cap = limits_.operator_cases.value_or(
      fields.value("max_cases", ManifestLimits::kDefaultOperatorCases));
  const std::string shown = size == UINT64_MAX ? "more than 2^64" : std::to_string(size);
  if (size > cap) {
    return Status::InvalidInput(Printf(
        "%s: operator '%s': its sweep makes %s cases, over the cap of %llu per operator; raise it "
        "with \"max_cases\" in the entry or opverify-batch --max-cases, or sweep fewer values",
        where.c_str(), name.c_str(), shown.c_str(), static_cast<unsigned long long>(cap)));
  }
  if (size > job_cases_cap_ - std::min(job_cases_, job_cases_cap_)) {
    return Status::InvalidInput(Printf(
        "%s: operator '%s': its sweep's %s cases bring the job to %llu, over the cap of %llu per "
        "job; raise it with \"max_job_cases\" or opverify-batch --max-job-cases",
        where.c_str(), name.c_str(), shown.c_str(),
        static_cast<unsigned long long>(job_cases_ + size),
        static_cast<unsigned long long>(job_cases_cap_)));
  }
  job_cases_ += size;
  if (const std::optional<std::string> repeated = RepeatedSweepValue(fields["sweep"]))
    return Status::InvalidInput(where + ": sweep " + *repeated + " (its values must be distinct)");
  return Status::Ok();
}

}  // namespace

Result<JobManifest> LoadManifest(const std::string& path, const ManifestLimits& limits) {
  const ManifestFile top{path, fs::absolute(path).lexically_normal()};
  if (Status regular = CheckRegularFile(top.absolute.string(), "manifest"); !regular.ok()) {
    if (regular.code() == Status::Code::kNotFound)
      return Status::NotFound(path + ": no such manifest");
    return Status::InvalidInput(path + regular.message().substr(top.absolute.string().size()));
  }
  JobManifest manifest;
  manifest.path = top.absolute.string();
  Resolver resolver(limits);
  if (Status loaded = resolver.Load(top, &manifest); !loaded.ok()) return loaded;
  if (Status declared = resolver.ApplyLibraryDeclarations(); !declared.ok()) return declared;
  manifest.operators = resolver.TakeOperators();
  if (manifest.operators.empty()) {
    return Status::InvalidInput(path + ": the job names no operator (its own or included)");
  }
  return manifest;
}

std::optional<AnchorProblem> CheckTaskAnchors(const JobManifest& job, bool require_anchors) {
  for (const OperatorJob& op : job.operators) {
    const std::string& task = op.code.task_file;
    if (!op.task_sha256) {
      if (require_anchors) {
        return AnchorProblem{3, op.name + ": no task_sha256 anchor for " + task +
                                    " (--require-anchors); pin it with: sha256sum " + task};
      }
      continue;
    }
    const Result<std::string> read = ReadUserFile(task, "task file", kMaxTaskBytes);
    if (!read.ok()) {
      return AnchorProblem{
          4, op.name + ": cannot read the anchored task file: " + read.status().message()};
    }
    const std::string& text = read.value();
    const std::string actual = Sha256Hex(text.data(), text.size());
    if (actual != *op.task_sha256) {
      return AnchorProblem{4, op.name + ": the task file " + task + " was changed: its SHA-256 is " +
                                  actual + ", the manifest's anchor is " + *op.task_sha256 +
                                  "; a changed reference is refused"};
    }
  }
  return std::nullopt;
}

}  // namespace opverify
