#include "runner/store/durable_file.h"

#include <fcntl.h>  // fallocate (GNU)
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace opverify {
namespace {

Status Failed(const std::string& path, const char* what, int error) {
  return Status::IoError(path + ": " + what + " failed: " + std::strerror(error));
}

// Closes `fd` when it goes out of scope.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) close(fd);
  }
};

Status WriteAll(int fd, const void* data, std::size_t size, const std::string& path) {
  const char* bytes = static_cast<const char*>(data);
  for (std::size_t written = 0; written < size;) {
    const ssize_t n = write(fd, bytes + written, size - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Failed(path, "write", n < 0 ? errno : EIO);
    written += static_cast<std::size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Result<int> OpenRegularFile(const std::string& path, int flags, const std::string& what) {
  const int fd = open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0 && errno == ENOENT) return Status::NotFound(path + ": no such file");
  if (fd < 0 && errno == ELOOP)
    return Status::IoError(path + ": " + what + ": a symbolic link (the store follows none)");
  if (fd < 0) return Failed(path, what.c_str(), errno);
  struct stat info {};
  const bool stated = fstat(fd, &info) == 0;
  const int error = errno;
  if (stated && S_ISREG(info.st_mode)) return fd;
  close(fd);
  if (!stated) return Failed(path, what.c_str(), error);
  return Status::IoError(path + ": " + what + ": not a regular file");
}

Status SyncDirectory(const std::string& directory) {
  const int fd = open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Failed(directory, "open", errno);
  const FdCloser closer{fd};
  if (fsync(fd) != 0) return Failed(directory, "fsync", errno);
  return Status::Ok();
}

Status WriteNewFile(const std::string& path, const void* data, std::size_t size, bool exclusive) {
  // Replacing is removing, then creating anew (O_EXCL): a symbolic link or a
  // FIFO planted at `path` (a report's temporary) is removed, never written
  // through or waited on.
  if (!exclusive && unlink(path.c_str()) != 0 && errno != ENOENT)
    return Failed(path, "removing what was there", errno);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Failed(path, "create", errno);
  Status status;
  {
    const FdCloser closer{fd};
    const int allocated = size > 0 ? posix_fallocate(fd, 0, static_cast<off_t>(size)) : 0;
    if (allocated != 0) {
      status = Failed(path, "allocating space", allocated);
    } else {
      status = WriteAll(fd, data, size, path);
      if (status.ok() && fsync(fd) != 0) status = Failed(path, "fsync", errno);
    }
  }
  if (!status.ok()) unlink(path.c_str());
  return status;
}

Status ReserveSpace(const std::string& path, std::uint64_t bytes) {
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return Failed(path, "open", errno);
  const FdCloser closer{fd};
  struct stat info {};
  if (fstat(fd, &info) != 0) return Failed(path, "fstat", errno);
  const std::uint64_t end = static_cast<std::uint64_t>(info.st_size) + bytes;
  rlimit limit{};
  if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      end > limit.rlim_cur) {
    return Failed(path, "allocating space (beyond the file-size limit, ulimit -f)", EFBIG);
  }
  if (fallocate(fd, FALLOC_FL_KEEP_SIZE, info.st_size, static_cast<off_t>(bytes)) == 0) {
    return Status::Ok();
  }
  if (errno != EOPNOTSUPP) return Failed(path, "allocating space", errno);
  struct statvfs space {};
  if (fstatvfs(fd, &space) != 0) return Failed(path, "statvfs", errno);
  if (static_cast<std::uint64_t>(space.f_bavail) * space.f_frsize < bytes) {
    return Failed(path, "allocating space", ENOSPC);
  }
  return Status::Ok();
}

Status ReleaseReservedSpace(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return Failed(path, "open", errno);
  const FdCloser closer{fd};
  struct stat info {};
  if (fstat(fd, &info) != 0) return Failed(path, "fstat", errno);
  const off_t allocated = static_cast<off_t>(info.st_blocks) * 512;
  if (allocated <= info.st_size) return Status::Ok();
  // Truncating to its own size frees the blocks past the end (ext4, xfs,
  // tmpfs); punching a hole there is a no-op on ext4.
  if (ftruncate(fd, info.st_size) != 0) return Failed(path, "releasing reserved space", errno);
  return Status::Ok();
}

}  // namespace opverify
