#include "runner/common/user_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace opverify {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

// stat(2)'s answer for `path`, or the Status why there is none.
Status Stat(const std::string& path, const std::string& role, struct stat* info) {
  if (path.empty()) return Status::InvalidInput("(empty path): no " + role + " named");
  if (::stat(path.c_str(), info) == 0) return Status::Ok();
  if (errno == ENOENT || errno == ENOTDIR) return Status::NotFound(path + ": no such " + role);
  return Status::IoError(path + ": " + role + " cannot be read: " + std::strerror(errno));
}

}  // namespace

Status CheckRegularFile(const std::string& path, const std::string& role) {
  struct stat info {};
  if (Status found = Stat(path, role, &info); !found.ok()) return found;
  if (!S_ISREG(info.st_mode)) {
    return Status::InvalidInput(path + ": " + role + " is " + KindOf(info.st_mode) +
                                ", not a regular file");
  }
  return Status::Ok();
}

Status CheckDirectory(const std::string& path, const std::string& role) {
  struct stat info {};
  if (Status found = Stat(path, role, &info); !found.ok()) return found;
  if (!S_ISDIR(info.st_mode)) {
    return Status::InvalidInput(path + ": " + role + " is " +
                                (S_ISREG(info.st_mode) ? "a file" : KindOf(info.st_mode)) +
                                ", not a folder");
  }
  return Status::Ok();
}

Result<std::string> ReadUserFile(const std::string& path, const std::string& role,
                                 std::size_t max_bytes) {
  if (Status regular = CheckRegularFile(path, role); !regular.ok()) return regular;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return Status::IoError(path + ": " + role + " cannot be opened: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    return Status::InvalidInput(path + ": " + role + " is not a regular file");
  }
  if (static_cast<std::size_t>(info.st_size) > max_bytes) {
    return Status::InvalidInput(path + ": " + role + " is " + std::to_string(info.st_size) +
                                " bytes; at most " + std::to_string(max_bytes) + " are read");
  }
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      return Status::IoError(path + ": " + role + " cannot be read: " + std::strerror(errno));
    }
    if (got == 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
    if (text.size() > max_bytes) {  // grew while being read
      return Status::InvalidInput(path + ": " + role + " holds more than " +
                                  std::to_string(max_bytes) + " bytes");
    }
  }
  return text;
}

}  // namespace opverify
