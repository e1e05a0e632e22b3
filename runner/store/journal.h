// The journal of finished cases beside a rank's shards (shards/rank-NNNN.journal):
// append-only, one JSON object a line naming the case and where it is stored,
//   {"address":8800,"case_id":"softmax/3f2a","n":3,"shard":"rank-0000.1.h5"}
// each line written only after the case is in its shard (and fsync'd after
// the shard was, when the writer promises to survive a machine crash).
// A line counts only when complete (it ends in '\n'): a crash mid-append
// leaves at most a torn last line, which readers ignore and the next Open
// cuts off (so the next line cannot be glued to it).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runner/common/status.h"

namespace opverify {

struct JournalEntry {
  std::string case_id;
  std::string shard;   // the shard's file name in shards/ ("rank-0000.1.h5")
  std::int64_t n = 0;  // the case's group: /cases/<n> in that shard
  // The group's object header address in the shard: readers reach the case
  // through it when a later, interrupted append tore /cases (a crash mid
  // H5Fflush). 0: unknown.
  std::uint64_t address = 0;
};

class Journal {
 public:
  // Opens `path` for appending, creating it (and syncing its directory) if
  // missing, and cuts off a torn last line. Errors name the file.
  static Result<Journal> Open(const std::string& path);
  Journal(Journal&& other) noexcept;
  Journal& operator=(Journal&& other) noexcept;
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  ~Journal();

  // Appends one line: when this returns Ok the entry survives the process
  // being killed, and with `sync` (fsync) a crash of the machine too. An
  // IoError (disk full) names the file; the entries before it stay intact.
  Status Append(const JournalEntry& entry, bool sync);
  const std::string& path() const { return path_; }

 private:
  Journal(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// The complete entries of the journal at `path`, in the order written. A
// missing file is NotFound; one that cannot be read (a folder, a FIFO, a
// device, a symbolic link: never followed; no
// permission, an I/O error) an IoError naming it; a complete line that is
// not an entry is InvalidInput naming the file and line.
Result<std::vector<JournalEntry>> ReadJournal(const std::string& path);

}  // namespace opverify
