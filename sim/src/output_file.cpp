// Safe output files (see output_file.hpp).
#include "ldmsim/sim/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

namespace fs = std::filesystem;

namespace {

std::string_view kind_of(fs::file_type type) {
  switch (type) {
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::symlink:
      return "a symbolic link";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::socket:
      return "a socket";
    default:
      return "not a regular file";
  }
}

std::atomic<unsigned> temporaries{0};

}  // namespace

void check_output_target(const fs::path& target, std::string_view what) {
  if (target.empty()) throw ConfigError(fmt::format("empty path for the {}", what));
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw ConfigError(
        fmt::format("cannot write the {} '{}': directory '{}' does not exist", what, target.string(), dir.string()));
  }
  const fs::file_status status = fs::symlink_status(target, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    throw ConfigError(fmt::format("cannot write the {} '{}': {}", what, target.string(), ec.message()));
  }
  if (fs::exists(status) && status.type() != fs::file_type::regular) {
    throw ConfigError(fmt::format("refusing to replace '{}' with the {}: it is {}, not a regular file", target.string(),
                                  what, kind_of(status.type())));
  }
}

void check_output_name(std::string_view name, std::string_view what) {
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  };
  std::string problem;
  if (name.empty()) {
    problem = "is empty";
  } else if (name.size() > 200) {
    problem = fmt::format("is {} characters long (at most 200)", name.size());
  } else if (name.front() == '.') {
    problem = "starts with '.'";
  } else {
    for (std::size_t i = 0; i < name.size(); ++i) {
      if (!allowed(name[i])) {
        problem = fmt::format("has character {:#04x} at {}", static_cast<unsigned char>(name[i]), i);
        break;
      }
    }
  }
  if (!problem.empty()) {
    std::string shown;
    for (char c : name.substr(0, 64)) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
    throw ConfigError(
        fmt::format("{} '{}' cannot name an output file: it {} (allowed: letters, digits, '_', '-' and "
                    "'.', not first)",
                    what, shown, problem));
  }
}

AtomicFile::AtomicFile(fs::path target, std::string_view what) : target_(std::move(target)), what_(what) {
  check_output_target(target_, what_);
  const fs::path dir = target_.parent_path();
  for (int attempt = 0; attempt < 100 && temporary_.empty(); ++attempt) {
    fs::path candidate =
        dir / fmt::format(".{}.tmp-{}-{}", target_.filename().string(), getpid(), temporaries.fetch_add(1));
    const int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      temporary_ = std::move(candidate);
    } else if (errno != EEXIST) {
      fail(fmt::format("cannot create a temporary beside it: {}", std::strerror(errno)));
    }
  }
  if (temporary_.empty()) fail("cannot create a temporary beside it");
  out_.open(temporary_, std::ios::binary | std::ios::trunc);
  if (!out_) fail("cannot open its temporary");
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  out_.close();
  std::error_code ec;
  fs::remove(temporary_, ec);
}

void AtomicFile::fail(const std::string& problem) const {
  throw std::runtime_error(fmt::format("writing the {} '{}': {}", what_, target_.string(), problem));
}

void AtomicFile::write(const void* data, std::size_t size) {
  if (committed_) fail("write after commit");
  out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out_) fail(fmt::format("write failed ({})", std::strerror(errno)));
}

void AtomicFile::commit() {
  if (committed_) return;
  out_.flush();
  out_.close();
  if (!out_) fail(fmt::format("flush failed ({})", std::strerror(errno)));
  const int fd = ::open(temporary_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    fail(fmt::format("fsync failed ({})", std::strerror(err)));
  }
  ::close(fd);
  check_output_target(target_, what_);  // it may have been replaced by something else while we wrote
  std::error_code ec;
  fs::rename(temporary_, target_, ec);
  if (ec) fail("cannot rename the temporary over it: " + ec.message());
  committed_ = true;
}

void write_file_atomically(const fs::path& target, std::string_view content, std::string_view what) {
  AtomicFile file(target, what);
  file.write(content);
  file.commit();
}

}  // namespace ldmsim
