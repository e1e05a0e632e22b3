// A child's stdout and stderr through a pipe into a log file that never grows
// past a cap: a program that floods its output (hostile or broken) costs a
// thread's reading, not the disk. The parent reads; the child never holds the
// file. What did not fit is dropped and the log says where it was cut.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "runner/common/status.h"

namespace opverify {

class CappedLog {
 public:
  // Appends to `path` (made if missing), `banner` first where it fits.
  // Everything the log holds, markers included, stays within cap_bytes.
  static Result<std::unique_ptr<CappedLog>> Open(const std::string& path, std::uint64_t cap_bytes,
                                                 const std::string& banner);
  ~CappedLog();  // Finish(0)
  CappedLog(const CappedLog&) = delete;
  CappedLog& operator=(const CappedLog&) = delete;

  // The pipe's write end: the child's fd 1 and 2. Close it here once the child has its copy.
  int write_fd() const { return write_fd_; }
  void CloseWriteEnd();
  // Waits up to timeout_s for every writer to close the pipe (the child and
  // anything it started), then stops reading. Idempotent.
  void Finish(double timeout_s);
  // The last bytes the child wrote, kept or dropped (what a crash report shows).
  std::string Tail();
  std::uint64_t dropped_bytes() const { return dropped_.load(); }

 private:
  CappedLog(int log_fd, int read_fd, int write_fd, int stop_fd, std::uint64_t cap_bytes);
  void Drain();
  void Write(const char* data, std::size_t size);

  int log_fd_;
  int read_fd_;
  int write_fd_;
  int stop_fd_;  // an eventfd: Finish tells the thread to stop
  std::uint64_t cap_bytes_;
  bool cut_ = false;
  std::atomic<std::uint64_t> dropped_{0};
  std::mutex mutex_;
  std::condition_variable ended_;
  bool done_ = false;
  std::string tail_;
  std::thread thread_;
};

}  // namespace opverify
