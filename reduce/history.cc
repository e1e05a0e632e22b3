#include "reduce/history.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <set>
#include <sstream>

#include "reduce/references.h"

namespace opverify {
namespace {

using nlohmann::json;

constexpr off_t kMaxHistoryBytes = off_t{4} << 30;  // 2,000 operators a night for years

// A string field of a history line; "" when it is missing or not a string
// (the file is the user's: a number there must not throw).
std::string TextField(const json& row, const char* key) {
  const auto field = row.find(key);
  return field != row.end() && field->is_string() ? field->get<std::string>() : std::string();
}

// "2026-12-03T01:40:18+02:00" -> "2026-12-02" (UTC); "" when it is not such a time.
std::string UtcDate(const std::string& timestamp) {
  int y, mo, d, h, mi, s, oh = 0, om = 0;
  char sign = '+';
  const int read = std::sscanf(timestamp.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c%2d:%2d", &y, &mo, &d,
                               &h, &mi, &s, &sign, &oh, &om);
  if (read < 6) return "";
  std::tm local{};
  local.tm_year = y - 1900;
  local.tm_mon = mo - 1;
  local.tm_mday = d;
  local.tm_hour = h;
  local.tm_min = mi;
  local.tm_sec = s;
  std::time_t t = timegm(&local);
  if (read == 9 && (sign == '+' || sign == '-'))
    t -= (sign == '+' ? 1 : -1) * (oh * 3600 + om * 60);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &utc);
  return text;
}

// The operator's verdict for the history: "incomplete" when it neither
// failed nor had every case stored and passed (a stopped night says nothing).
std::string Verdict(const OperatorModel& op) {
  if (op.failed > 0) return "failed";
  return op.all_passed ? "passed" : "incomplete";
}

// The most common error type of the operator's failures; "" when none failed.
std::string MainError(const OperatorModel& op) {
  std::string main;
  int most = 0;
  for (const auto& [type, count] : op.error_types) {
    if (count > most) main = type, most = count;
  }
  return main;
}

nlohmann::ordered_json LineOf(const OperatorModel& op, const RunModel& run,
                              const NightVersions& night, const std::string& commit,
                              const std::map<std::string, double>& spent) {
  nlohmann::ordered_json row;
  row["date"] = night.date;
  row["commit"] = commit;
  row["op"] = op.name;
  row["verdict"] = Verdict(op);
  row["cases"] = op.passed + op.waived + op.failed;
  row["failed"] = op.failed;
  if (op.failed > 0) row["error_type"] = MainError(op);
  row["runner"] = night.runner;
  const json& env = op.facts.environment;
  if (env.is_object() && env.contains("libraries") && env["libraries"].is_object() &&
      !env["libraries"].empty())
    row["library"] = env["libraries"];
  row["device"] = BenchDevice(op);
  if (const std::optional<double> latency = GeomeanLatency(op))
    row["geomean_latency_ms"] = *latency;
  // Its cost, for the next night's plan: only where it ran whole (a night cut
  // short says how long it got, not how long it takes).
  if (row["verdict"] != "incomplete") {
    const auto found = spent.find(op.name);
    row["seconds"] = found != spent.end() ? found->second : op.wall_s();
  }
  row["run"] = run.run_dir;
  return row;
}

// The file's lines; a line that is not a JSON object (a crash cut it, an
// edit broke it) is skipped with a warning naming the file and line.
void ParseRows(const std::string& text, const std::string& path, History* history) {
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    json parsed = json::parse(line, nullptr, false);
    if (!parsed.is_object()) {
      history->warnings.push_back(path + ":" + std::to_string(number) +
                                  ": skipped: not a JSON line of a history file (damaged?)");
      continue;
    }
    history->rows.push_back(std::move(parsed));
  }
}

Status Errno(const std::string& path, const char* what) {
  return Status::IoError(path + ": " + what + " the history file: " + std::strerror(errno));
}

// The whole file from `fd` (held under the lock).
Result<std::string> ReadAll(int fd, const std::string& path) {
  struct stat info {};
  if (fstat(fd, &info) != 0) return Errno(path, "cannot stat");
  if (!S_ISREG(info.st_mode))
    return Status::InvalidInput(path + ": the history is not a regular file");
  if (info.st_size > kMaxHistoryBytes)
    return Status::InvalidInput(path + ": the history file is over 4 GiB; start a new one");
  std::string text(static_cast<std::size_t>(info.st_size), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = pread(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(path, "cannot read");
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  text.resize(done);
  return text;
}

Status WriteAll(int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(path, "cannot append to");
    done += static_cast<std::size_t>(n);
  }
  return fsync(fd) == 0 ? Status::Ok() : Errno(path, "cannot sync");
}

// An open descriptor closed on every path.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// Takes `lock` (flock) on `fd`, then reads the whole file into `history`'s
// rows (damaged lines its warnings) and returns the text.
Result<std::string> ReadRowsLocked(int fd, int lock, const std::string& path, History* history) {
  while (flock(fd, lock) != 0) {
    if (errno != EINTR) return Errno(path, "cannot lock");
  }
  Result<std::string> text = ReadAll(fd, path);
  if (text.ok()) ParseRows(text.value(), path, history);
  return text;
}

}  // namespace

NightVersions NightOf(const RunModel& run, const std::string& today) {
  NightVersions night;
  for (const OperatorModel& op : run.operators) {
    const json& env = op.facts.environment;
    if (!env.is_object() || !env.contains("timestamp") || !env["timestamp"].is_string()) continue;
    const std::string date = UtcDate(env["timestamp"].get<std::string>());
    if (!date.empty() && (night.date.empty() || date < night.date)) night.date = date;
  }
  if (night.date.empty() && run.info.started_at) night.date = UtcDate(*run.info.started_at);
  if (night.date.empty()) night.date = today;
  night.runner = run.run_info.contains("opverify") ? run.run_info["opverify"] : json(nullptr);
  return night;
}

Result<History> UpdateHistory(const std::string& path, const RunModel& run,
                              const NightVersions& night, const std::string& commit) {
  Fd file;
  file.fd = open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
  if (file.fd < 0) return Errno(path, "cannot open");
  // One night's lines at a time: another reducer's read-check-append waits.
  History history;
  Result<std::string> text = ReadRowsLocked(file.fd, LOCK_EX, path, &history);
  if (!text.ok()) return text.status();
  std::set<std::string> present;  // this run's operators already in the file
  for (const json& row : history.rows) {
    if (TextField(row, "run") == run.run_dir) present.insert(TextField(row, "op"));
  }
  // A last line cut short by a crash stays its own (skipped) line.
  std::string lines = !text->empty() && text->back() != '\n' ? "\n" : "";
  const std::size_t before = history.rows.size();
  const auto timeline = run.run_info.find("timeline");
  const std::map<std::string, double> spent = timeline != run.run_info.end()
                                                  ? TimelineOperatorSeconds(*timeline)
                                                  : std::map<std::string, double>{};
  for (const OperatorModel& op : run.operators) {
    if (op.cases.empty() || present.count(op.name) > 0) continue;
    const std::string line = LineOf(op, run, night, commit, spent)
                                 .dump(-1, ' ', false, json::error_handler_t::replace);
    history.rows.push_back(json::parse(line));
    lines += line + "\n";
  }
  history.appended = static_cast<int>(history.rows.size() - before);
  if (history.appended > 0) {
    if (Status written = WriteAll(file.fd, lines, path); !written.ok()) return written;
  }
  return history;
}

std::map<std::string, double> TimelineOperatorSeconds(const json& timeline) {
  std::map<std::string, double> seconds;
  if (!timeline.is_object()) return seconds;
  const auto items = timeline.find("items");
  if (items == timeline.end() || !items->is_array()) return seconds;
  for (const json& item : *items) {
    if (!item.is_object()) continue;
    const auto op = item.find("op"), start = item.find("start_s"), end = item.find("end_s");
    if (op == item.end() || !op->is_string() || start == item.end() || !start->is_number() ||
        end == item.end() || !end->is_number())
      continue;
    seconds[op->get<std::string>()] += std::max(0.0, end->get<double>() - start->get<double>());
  }
  return seconds;
}

Result<std::map<std::string, double>> HistorySeconds(const std::string& path,
                                                     std::vector<std::string>* warnings) {
  std::map<std::string, double> seconds;
  Fd file;
  file.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (file.fd < 0) {
    if (errno == ENOENT) return seconds;  // the first night: nothing predicted
    return Errno(path, "cannot open");
  }
  History history;  // read amid no other reducer's append
  if (Result<std::string> text = ReadRowsLocked(file.fd, LOCK_SH, path, &history); !text.ok())
    return text.status();
  for (const json& row : history.rows) {
    const std::string op = TextField(row, "op");
    const auto spent = row.find("seconds");
    if (op.empty() || spent == row.end() || !spent->is_number()) continue;
    const double value = spent->get<double>();
    if (std::isfinite(value) && value >= 0) seconds[op] = value;
  }
  if (warnings != nullptr) *warnings = std::move(history.warnings);
  return seconds;
}

VerdictTrend TrendOf(const std::vector<json>& rows, const RunModel& run, const NightVersions& night,
                     const std::string& file) {
  VerdictTrend trend;
  trend.file = file;
  std::map<std::string, std::map<std::string, std::pair<std::string, std::string>>> nights;
  // op -> run -> (date, verdict): an earlier night's last line for the operator.
  std::set<std::string> runs;
  std::set<std::string> ours;
  for (const OperatorModel& op : run.operators) ours.insert(op.name);
  for (const json& row : rows) {
    const std::string op = TextField(row, "op"), verdict = TextField(row, "verdict");
    const std::string where = TextField(row, "run");
    if (verdict.empty() || ours.count(op) == 0 || where == run.run_dir) continue;
    nights[op][where] = {TextField(row, "date"), verdict};
    runs.insert(where);
  }
  trend.nights = static_cast<int>(runs.size());
  for (const OperatorModel& op : run.operators) {
    // Its earlier nights with a verdict, oldest first (runs of one date by name).
    std::vector<std::pair<std::string, std::string>> earlier;  // (date, verdict)
    for (const auto& [where, seen] : nights[op.name]) {
      if (seen.second != "incomplete") earlier.push_back(seen);
    }
    std::stable_sort(earlier.begin(), earlier.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    const bool failed_before = !earlier.empty() && earlier.back().second == "failed";
    if (op.failed == 0) {
      if (op.all_passed && failed_before) trend.newly_passing.push_back(op.name);
      continue;
    }
    FailingStreak streak{op.name, night.date, 1};
    for (auto it = earlier.rbegin(); it != earlier.rend() && it->second == "failed"; ++it) {
      streak.since = it->first;
      ++streak.nights;
    }
    (failed_before ? trend.still_failing : trend.newly_failing).push_back(streak);
    trend.failing[op.name] = streak;
  }
  return trend;
}

std::string FailingSinceText(const VerdictTrend& trend, const std::string& op) {
  const auto streak = trend.failing.find(op);
  if (streak == trend.failing.end()) return "";
  const FailingStreak& s = streak->second;
  return "failing since " + s.since + " (" + std::to_string(s.nights) +
         (s.nights == 1 ? " night)" : " nights)");
}

nlohmann::ordered_json VerdictTrend::ToJson() const {
  const auto streaks = [](const std::vector<FailingStreak>& list) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const FailingStreak& s : list)
      out.push_back({{"op", s.op}, {"since", s.since}, {"nights", s.nights}});
    return out;
  };
  return {{"file", file},
          {"earlier_nights", nights},
          {"still_failing", streaks(still_failing)},
          {"newly_failing", streaks(newly_failing)},
          {"newly_passing", newly_passing}};
}

std::map<std::string, std::vector<HistoryPoint>> LatencyHistory(const std::vector<json>& rows,
                                                                const RunModel& run) {
  std::map<std::string, std::string> devices;  // the run's operators -> their bench device
  for (const OperatorModel& op : run.operators) devices[op.name] = BenchDevice(op);
  std::map<std::string, std::vector<HistoryPoint>> out;
  for (const json& row : rows) {
    const auto device = devices.find(TextField(row, "op"));
    if (device == devices.end()) continue;
    if (!device->second.empty() && TextField(row, "device") != device->second) continue;
    const json& latency = row.contains("geomean_latency_ms") ? row["geomean_latency_ms"] : json();
    if (!latency.is_number() || !(latency.get<double>() > 0)) continue;
    out[device->first].push_back(
        {TextField(row, "date"), TextField(row, "commit"), latency.get<double>()});
  }
  for (auto& [op, points] : out) {
    std::stable_sort(points.begin(), points.end(),
                     [](const HistoryPoint& a, const HistoryPoint& b) { return a.date < b.date; });
  }
  return out;
}

}  // namespace opverify
