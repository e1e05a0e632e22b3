#include "runner/manifest/manifest.h"

#include <fnmatch.h>
#include <glob.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <utility>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "runner/common/sha256.h"
#include "runner/common/strings.h"
#include "runner/manifest/jobs_schema.h"

namespace opverify {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kMaxSchemaErrors = 8;  // more would bury the first
constexpr std::size_t kMaxValueChars = 60;   // of an offending value quoted in a message
constexpr std::string_view kTaskSuffix = "_torch.py";

// A manifest file: `display` as messages name it (relative paths stay
// relative to the working directory), `absolute` to open it.
struct ManifestFile {
  std::string display;
  fs::path absolute;
};

// "<file>: <JSON pointer>", the prefix of every message about a value.
std::string At(const std::string& file, const std::string& pointer) {
  return file + ": " + (pointer.empty() ? std::string("(root)") : pointer);
}

std::string Join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

// RFC 6901: "~" and "/" inside a key.
std::string EscapePointerToken(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// `next` (a path inside a manifest) as seen from the working directory and
// absolutely, given the manifest it is relative to.
ManifestFile Beside(const ManifestFile& manifest, const std::string& next) {
  return {(fs::path(manifest.display).parent_path() / next).lexically_normal().string(),
          (manifest.absolute.parent_path() / next).lexically_normal()};
}

// Operator and implementation names become file names and case-id prefixes:
// the schema's "name" pattern, for names that come from discovered files.
bool IsOperatorName(const std::string& name) {
  if (name.empty() || name.front() == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

// ---- Syntax --------------------------------------------------------------

// nlohmann counts lines and columns this way: `byte` characters read, a
// newline starting a new line at column 0.
std::pair<std::size_t, std::size_t> LineColumn(const std::string& text, std::size_t byte) {
  std::size_t line = 1;
  std::size_t column = 0;
  for (std::size_t i = 0; i < byte; ++i) {
    if (i < text.size() && text[i] == '\n') {
      ++line;
      column = 0;
    } else {
      ++column;
    }
  }
  return {line, std::max<std::size_t>(column, 1)};
}

// nlohmann's message without its "[json.exception...] parse error at line
// L, column C: " prefix (we print the position ourselves).
std::string ParseErrorReason(const std::string& what) {
  const std::size_t column = what.find("column ");
  const std::size_t colon = column == std::string::npos ? column : what.find(": ", column);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

Result<json> ReadJson(const ManifestFile& file) {
  std::ifstream in(file.absolute, std::ios::binary);
  if (!in) return Status::IoError(file.display + ": cannot be read");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    const auto [line, column] = LineColumn(text, e.byte);
    return Status::InvalidInput(file.display + ":" + std::to_string(line) + ":" +
                                std::to_string(column) + ": " + ParseErrorReason(e.what()));
  }
}

// ---- Schema --------------------------------------------------------------

// The compiled-in schema, parsed once. valijson refusing it is a bug of
// ours, reported (as Internal) by every load.
struct CompiledSchema {
  json document;
  valijson::Schema schema;
  std::string error;
};

const CompiledSchema& JobsSchema() {
  static const std::unique_ptr<CompiledSchema> compiled = [] {
    auto out = std::make_unique<CompiledSchema>();
    try {
      out->document = json::parse(JobsSchemaText());
      valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
      valijson::adapters::NlohmannJsonAdapter adapter(out->document);
      parser.populateSchema(adapter, out->schema);
    } catch (const std::exception& e) {
      out->error = e.what();
    }
    return out;
  }();
  return *compiled;
}

// valijson's context ("<root>", "[operators]", "[3]") as a JSON pointer.
std::string PointerOf(const std::vector<std::string>& context) {
  std::string pointer;
  for (const std::string& part : context) {
    if (part == "<root>") continue;
    const bool bracketed = part.size() >= 2 && part.front() == '[' && part.back() == ']';
    pointer += "/" + EscapePointerToken(bracketed ? part.substr(1, part.size() - 2) : part);
  }
  return pointer;
}

// "value: <JSON>" of the scalar at `pointer`, for a message ("" for objects
// and arrays, whose errors already say what is wrong inside them).
std::string ValueAt(const json& document, const std::string& pointer) {
  try {
    const json& value = document.at(json::json_pointer(pointer));
    if (value.is_structured()) return "";
    std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() > kMaxValueChars) text = text.substr(0, kMaxValueChars) + "...";
    return "value: " + text;
  } catch (const json::exception&) {
    return "";
  }
}

// What the schema allows for a field, when valijson's message does not say:
// the schema's "definitions" are named after the fields they describe.
std::string Allowed(const json& schema, const std::string& pointer, const std::string& what) {
  const std::string field = pointer.substr(pointer.rfind('/') + 1);
  const json* definition = nullptr;
  if (const auto definitions = schema.find("definitions"); definitions != schema.end()) {
    if (const auto it = definitions->find(field); it != definitions->end()) definition = &*it;
  }
  if (!definition) return "";
  if (what.find("enum") != std::string::npos && definition->contains("enum")) {
    std::vector<std::string> values;
    for (const json& value : (*definition)["enum"]) values.push_back(value.dump());
    return "; allowed: " + Join(values, ", ");
  }
  if (what.find("'type'") != std::string::npos && definition->contains("type")) {
    return "; expected: " + (*definition)["type"].dump();
  }
  if (what.find("'pattern'") != std::string::npos && definition->contains("pattern")) {
    return "; must match: " + (*definition)["pattern"].dump();
  }
  return "";
}

// Every schema violation of `document`, one line each: "<file>: <pointer>:
// <what>". valijson reports each failure and then every enclosing schema
// that failed because of it ("Failed to validate item #3 in array."); only
// the failures themselves are kept.
Status ValidateAgainstSchema(const ManifestFile& file, const json& document) {
  const CompiledSchema& compiled = JobsSchema();
  if (!compiled.error.empty()) {
    return Status::Internal("schemas/jobs.schema.json (compiled in) is refused by valijson: " +
                            compiled.error);
  }
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter adapter(document);
  if (validator.validate(compiled.schema, adapter, &results)) return Status::Ok();

  static const std::string kUnknownProperty =
      "Object contains a property that could not be validated using 'properties' or "
      "'additionalProperties' constraints: '";
  std::vector<std::string> failures;
  std::vector<std::string> enclosing;
  valijson::ValidationResults::Error error;
  while (results.popError(error)) {
    std::string pointer = PointerOf(error.context);
    std::string what = error.description;
    if (what.rfind(kUnknownProperty, 0) == 0 && what.size() >= kUnknownProperty.size() + 2) {
      const std::string key =
          what.substr(kUnknownProperty.size(), what.size() - kUnknownProperty.size() - 2);
      pointer += "/" + EscapePointerToken(key);
      what = "unknown field '" + key + "' (not allowed here by schemas/jobs.schema.json)";
    } else {
      const std::string value = ValueAt(document, pointer);
      const std::string allowed = Allowed(compiled.document, pointer, what);
      if (!value.empty() || !allowed.empty()) {
        what += " (" + (value.empty() ? allowed.substr(2) : value + allowed) + ")";
      }
    }
    std::string line = At(file.display, pointer) + ": " + what;
    auto& list = error.description.rfind("Failed to validate", 0) == 0 ? enclosing : failures;
    if (std::find(list.begin(), list.end(), line) == list.end()) list.push_back(std::move(line));
  }
  // Only enclosing failures: a constraint failed without saying why; the
  // innermost enclosing one (reported first) is the best place to look.
  if (failures.empty() && !enclosing.empty()) failures.push_back(enclosing.front());
  std::vector<std::string>& lines = failures;
  const std::size_t total = lines.size();
  if (lines.size() > kMaxSchemaErrors) {
    lines.resize(kMaxSchemaErrors);
    lines.push_back("(" + std::to_string(total - kMaxSchemaErrors) + " more)");
  }
  return Status::InvalidInput(Join(lines, "\n"));
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

JobBench BenchFrom(const json& fields) {
  JobBench bench;
  if (!fields.contains("bench")) return bench;
  const json& b = fields["bench"];
  bench.warmup = b.value("warmup", bench.warmup);
  bench.repeats = b.value("repeats", bench.repeats);
  bench.enabled = b.value("enabled", bench.enabled);
  bench.adaptive = b.value("adaptive", bench.adaptive);
  bench.target_rse = b.value("target_rse", bench.target_rse);
  bench.max_repeats = b.value("max_repeats", bench.max_repeats);
  return bench;
}

// An operator resolved, and the include chain that brought its manifest in
// (empty for the top manifest), for duplicate messages.
struct Resolved {
  OperatorJob job;
  std::string via;  // "a.json -> b.json"
};

class Resolver {
 public:
  Status Load(const ManifestFile& file, JobManifest* top);

  std::vector<OperatorJob> TakeOperators() {
    std::vector<OperatorJob> out;
    out.reserve(resolved_.size());
    for (Resolved& r : resolved_) out.push_back(std::move(r.job));
    return out;
  }

 private:
  Status LoadIncludes(const ManifestFile& file, const json& document);
  Status AddExplicit(const ManifestFile& file, const std::string& pointer, const json& fields);
  Status AddDiscovered(const ManifestFile& file, const std::string& pointer, const json& fields);
  // `dir` absolute, `display_dir` as messages name it.
  Status Add(const ManifestFile& file, const std::string& pointer, const json& fields,
             const std::string& name, const fs::path& dir, const fs::path& display_dir);
  std::string Via() const { return stack_display_.size() > 1 ? Join(stack_display_, " -> ") : ""; }

  std::vector<Resolved> resolved_;
  std::map<std::string, std::size_t> by_name_;  // index into resolved_
  std::vector<fs::path> stack_;                 // manifests being loaded (canonical), for cycles
  std::vector<std::string> stack_display_;
};

Status Resolver::Load(const ManifestFile& file, JobManifest* top) {
  Result<json> document = ReadJson(file);
  if (!document.ok()) return document.status();
  if (Status valid = ValidateAgainstSchema(file, document.value()); !valid.ok()) return valid;
  const json& doc = document.value();
  if (top) {
    top->name = doc["name"].get<std::string>();
    top->description = doc.value("description", "");
  }

  stack_.push_back(fs::weakly_canonical(file.absolute));
  stack_display_.push_back(file.display);
  if (Status included = LoadIncludes(file, doc); !included.ok()) return included;

  const json defaults = doc.value("defaults", json::object());
  const json& operators = doc["operators"];
  for (std::size_t i = 0; i < operators.size(); ++i) {
    const std::string pointer = "/operators/" + std::to_string(i);
    const json fields = ApplyDefaults(defaults, operators[i]);
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
    if (!fs::is_regular_file(included.absolute)) {
      return Status::NotFound(where + ": included manifest " + included.display + " not found");
    }
    const fs::path canonical = fs::weakly_canonical(included.absolute);
    if (std::find(stack_.begin(), stack_.end(), canonical) != stack_.end()) {
      return Status::InvalidInput(where + ": include cycle: " + Join(stack_display_, " -> ") +
                                  " -> " + included.display);
    }
    if (Status loaded = Load(included, nullptr); !loaded.ok()) return loaded;
  }
  return Status::Ok();
}

Status Resolver::AddExplicit(const ManifestFile& file, const std::string& pointer,
                             const json& fields) {
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
  const fs::path base = file.absolute.parent_path();
  const GlobMatches matches(GlobEscaped(base.string() + "/") + pattern);
  if (matches.rc() != 0 && matches.rc() != GLOB_NOMATCH) {
    return Status::IoError(where + ": glob '" + pattern + "' failed (glob(3) error " +
                           std::to_string(matches.rc()) + ")");
  }
  const std::vector<std::string> excludes = fields.value("exclude", std::vector<std::string>{});
  std::map<std::string, fs::path> found;  // name -> its folder, sorted by name
  for (const std::string& match : matches.paths()) {
    const fs::path task(match);
    if (!fs::is_regular_file(task)) continue;
    const std::string file_name = task.filename().string();
    const std::string name = file_name.substr(0, file_name.size() - kTaskSuffix.size());
    const bool excluded = std::any_of(excludes.begin(), excludes.end(), [&](const std::string& e) {
      return fnmatch(e.c_str(), name.c_str(), 0) == 0;
    });
    if (excluded) continue;
    if (!IsOperatorName(name)) {
      return Status::InvalidInput(
          Printf("%s: glob '%s' found %s, whose operator name '%s' is not a name (letters, "
                 "digits, _ and -)",
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
        (fs::path(file.display).parent_path() / dir.lexically_relative(base)).lexically_normal();
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
  job.impl_name = fields.value("impl_name", job.impl_name);
  const fs::path absolute_dir = fs::absolute(dir).lexically_normal();
  job.task_file = (absolute_dir / (name + std::string(kTaskSuffix))).string();
  job.impl_file = (absolute_dir / (name + "_" + job.impl_name + ".py")).string();
  for (const auto& [path, role] :
       {std::pair{job.task_file, "task file"}, std::pair{job.impl_file, "implementation file"}}) {
    if (!fs::is_regular_file(path)) {
      const std::string shown = (display_dir / fs::path(path).filename()).string();
      return Status::NotFound(Printf("%s: %s %s not found", where.c_str(), role, shown.c_str()));
    }
  }
  if (fields.contains("non_compute")) job.non_compute = fields["non_compute"].get<bool>();
  if (fields.contains("standard")) {
    const std::optional<Standard> standard = ParseStandard(fields["standard"].get<std::string>());
    if (!standard) return Status::Internal(where + ": schema and judge disagree on 'standard'");
    job.standard = *standard;
  }
  if (fields.contains("precision_mode") && !fields["precision_mode"].is_null()) {
    const std::optional<PrecisionMode> mode =
        ParsePrecisionMode(fields["precision_mode"].get<std::string>());
    if (!mode) return Status::Internal(where + ": schema and judge disagree on 'precision_mode'");
    job.precision_mode = *mode;
  }
  job.timeout_s = fields.value("timeout_s", job.timeout_s);
  job.lint = fields.value("lint", job.lint);
  job.repeat = fields.value("repeat", job.repeat);
  job.seeds = fields.value("seeds", job.seeds);
  job.golden_precision = fields.value("golden_precision", job.golden_precision);
  job.edge_cases = fields.value("edge_cases", job.edge_cases);
  job.runtime_checks = fields.value("runtime_checks", job.runtime_checks);
  job.ghost_replay = fields.value("ghost_replay", job.ghost_replay);
  job.bench = BenchFrom(fields);
  if (job.bench.adaptive && job.bench.max_repeats < job.bench.repeats) {
    return Status::InvalidInput(
        where + ": bench.max_repeats (" + std::to_string(job.bench.max_repeats) +
        ") is below bench.repeats (" + std::to_string(job.bench.repeats) + ")");
  }
  job.tags = fields.value("tags", job.tags);
  if (fields.contains("task_sha256")) job.task_sha256 = fields["task_sha256"].get<std::string>();
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

}  // namespace

Result<JobManifest> LoadManifest(const std::string& path) {
  const ManifestFile top{path, fs::absolute(path).lexically_normal()};
  if (!fs::is_regular_file(top.absolute)) return Status::NotFound(path + ": no such manifest");
  JobManifest manifest;
  manifest.path = top.absolute.string();
  Resolver resolver;
  if (Status loaded = resolver.Load(top, &manifest); !loaded.ok()) return loaded;
  manifest.operators = resolver.TakeOperators();
  if (manifest.operators.empty()) {
    return Status::InvalidInput(path + ": the job names no operator (its own or included)");
  }
  return manifest;
}

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

std::string CaseId(const std::string& op_name, const json& params, int index) {
  if (params.is_null()) return op_name + "/#" + std::to_string(index);
  return op_name + "/" + params.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string EdgeCaseId(const std::string& op_name, const std::string& label) {
  return op_name + "/edge/" + label;
}

std::optional<AnchorProblem> CheckTaskAnchors(const JobManifest& job, bool require_anchors) {
  for (const OperatorJob& op : job.operators) {
    if (!op.task_sha256) {
      if (require_anchors) {
        return AnchorProblem{3, op.name + ": no task_sha256 anchor for " + op.task_file +
                                    " (--require-anchors); pin it with: sha256sum " + op.task_file};
      }
      continue;
    }
    std::ifstream in(op.task_file, std::ios::binary);
    if (!in) return AnchorProblem{4, op.name + ": cannot read the anchored task file " + op.task_file};
    std::stringstream bytes;
    bytes << in.rdbuf();
    const std::string text = bytes.str();
    const std::string actual = Sha256Hex(text.data(), text.size());
    if (actual != *op.task_sha256) {
      return AnchorProblem{4, op.name + ": the task file " + op.task_file + " was changed: its SHA-256 is " + actual +
                                  ", the manifest's anchor is " + *op.task_sha256 +
                                  "; a changed reference is refused"};
    }
  }
  return std::nullopt;
}

}  // namespace opverify
