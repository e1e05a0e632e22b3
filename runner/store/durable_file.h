// Writing files so that a crash or a full disk cannot leave them half done:
// space is allocated before bytes are written, and files and the directories
// naming them are fsync'd.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "runner/common/status.h"

namespace opverify {

// fsync() of a directory, so that a file created, renamed or removed in it
// is still there after the machine crashes (fsync of the file itself covers
// only its contents). Errors name `directory` and errno's text.
Status SyncDirectory(const std::string& directory);

// Opens `path` with open(2) `flags` (O_CREAT allowed) without following a
// symbolic link or waiting on a FIFO (O_NOFOLLOW, O_NONBLOCK) and returns
// the descriptor (O_CLOEXEC) of a regular file: a journal linked to
// /dev/zero would swallow every entry, a FIFO in a shard's place would hang
// its reader. NotFound "<path>: no such file"; an IoError "<path>: <what>:
// a symbolic link (the store follows none)", ": not a regular file" or
// errno's text otherwise.
Result<int> OpenRegularFile(const std::string& path, int flags, const std::string& what);

// Writes `size` bytes to a new file at `path` and fsyncs it. The file's
// space is allocated first (posix_fallocate), so a full disk fails before
// anything is written; on any failure the file is removed. `exclusive`:
// fail when `path` exists (O_EXCL), else replace it: whatever is there (a
// file, a symbolic link, a FIFO) is removed first, never followed. Errors
// name `path`.
Status WriteNewFile(const std::string& path, const void* data, std::size_t size, bool exclusive);

// Allocates `bytes` of disk space past the end of the existing file at
// `path` without changing its size (fallocate FALLOC_FL_KEEP_SIZE), so that
// appending that much cannot fail for lack of space. Space already
// allocated there counts, so calling it before each append costs little.
// Where the file system cannot allocate ahead, the free space (statvfs) is
// checked instead. Also checks the file-size limit (ulimit -f). An IoError
// naming `path` (ENOSPC, EFBIG) leaves the file as it was.
Status ReserveSpace(const std::string& path, std::uint64_t bytes);
// Gives back the space ReserveSpace allocated past the end of the file
// (ftruncate to its own size). Errors name `path`.
Status ReleaseReservedSpace(const std::string& path);

}  // namespace opverify
