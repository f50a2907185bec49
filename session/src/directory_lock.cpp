// The lock of a run directory (see directory_lock.hpp).
#include "ldmsim/session/directory_lock.hpp"

#include <fcntl.h>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>

#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

namespace fs = std::filesystem;

std::string printable_line(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\n') break;
    out += (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) ? c : '?';
  }
  return out;
}

DirectoryLock::DirectoryLock(const fs::path& dir, std::string_view holder, bool create, std::string_view option) {
  const fs::path file = dir / kLockFile;
  for (int attempt = 0;; ++attempt) {
    const int fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), 0666);
    if (fd < 0 && !create && errno == ENOENT) return;  // not a run directory (any more)
    if (fd < 0) {
      throw ConfigError(fmt::format("{} {}: cannot open the lock file {}: {}", option, dir.string(), file.string(),
                                    std::strerror(errno)));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      char text[512] = {};
      const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
      ::close(fd);
      if (error != EWOULDBLOCK) {
        throw ConfigError(
            fmt::format("{} {}: cannot lock {}: {}", option, dir.string(), file.string(), std::strerror(error)));
      }
      const std::string who = n > 0 ? printable_line(std::string_view(text, static_cast<std::size_t>(n))) : "";
      throw ConfigError(fmt::format(
          "{} {}: another ldmsim process owns this directory ({}); wait for it to finish or choose another {}", option,
          dir.string(), who.empty() ? "it has not said which" : who, option));
    }
    // The holder before us may have removed the file (a failed run cleaning up the directory it created) after we
    // opened it: then our lock is on a file nobody else will see. Lock the file the path names now.
    struct stat held {
    }, named{};
    if (::fstat(fd, &held) == 0 && ::lstat(file.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      fd_ = fd;
      break;
    }
    ::close(fd);
    if (attempt == 10)
      throw ConfigError(fmt::format("{} {}: cannot take the lock {}", option, dir.string(), file.string()));
    if (create) {
      std::error_code ignored;
      fs::create_directories(dir, ignored);  // the run that removed it may have removed the directory too
    }
  }
  const std::string text =
      fmt::format("pid {}, {}, since {:%Y-%m-%d %H:%M:%S} UTC\n", ::getpid(), printable_line(holder),
                  fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, text.data(), text.size(), 0) < 0) {
    // The lock is what matters; the text only helps a refused command name us.
  }
}

DirectoryLock::DirectoryLock(DirectoryLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& other) noexcept {
  if (this != &other) {
    DirectoryLock dropped(std::move(*this));
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

DirectoryLock::~DirectoryLock() {
  if (fd_ < 0) return;
  if (::ftruncate(fd_, 0) != 0) {
    // the holder text of a finished command is harmless
  }
  ::close(fd_);  // releases the lock
}

DirectoryLock lock_run_directory_of(const fs::path& file, std::string_view holder, std::string_view option) {
  if (file.filename() == kLockFile) {
    throw ConfigError(fmt::format("{} {}: that is the lock file of a run directory; choose another output path", option,
                                  file.string()));
  }
  fs::path dir = file.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code error;
  if (!fs::is_directory(dir, error)) return {};  // the write names the problem
  return DirectoryLock(dir, holder, false, option);
}

}  // namespace ldmsim
