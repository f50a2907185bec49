// The lock that makes one process the owner of a run directory: flock() on DIR/.ldmsim-run.lock, whose text names
// the holder. A run holds it from start to end (run_directory.hpp); a command writing a file into a run directory
// (report -o, trace export -o, trace filter -o) holds it while it reads and writes, so that no file lands in a
// directory while a run owns it (docs/user-guide.md, "Output files"). The lock goes with its process however that
// ends, so a stale lock file never blocks anyone.
#pragma once

#include <filesystem>
#include <string_view>

namespace ldmsim {

/// The lock file whose flock() makes a process the owner of its directory; it names its holder.
inline constexpr const char* kLockFile = ".ldmsim-run.lock";

class DirectoryLock {
 public:
  /// Holds nothing.
  DirectoryLock() = default;
  /// Locks directory `dir` (which exists) and writes "pid N, HOLDER, since TIME" into the lock file, creating the
  /// file when `create` (else, without a lock file, nothing is locked: held() is false). ConfigError, naming
  /// `option`, `dir` and what the holder wrote, when another process has the lock.
  DirectoryLock(const std::filesystem::path& dir, std::string_view holder, bool create, std::string_view option);
  DirectoryLock(DirectoryLock&& other) noexcept;
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  /// Empties the holder text and releases the lock (the file stays).
  ~DirectoryLock();

  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

/// Locks the directory `file` is written into when it is a run directory (one holding kLockFile), for `holder`
/// ("ldmsim report"); elsewhere nothing is locked. `option` names the output in errors ("-o").
DirectoryLock lock_run_directory_of(const std::filesystem::path& file, std::string_view holder,
                                    std::string_view option);

/// Printable form of text read from a file another process wrote: up to its first newline, every control
/// character shown as '?'.
std::string printable_line(std::string_view text);

}  // namespace ldmsim
