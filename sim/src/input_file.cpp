// Bounded input reading and depth-limited JSON parsing (see input_file.hpp).
#include "ldmsim/sim/input_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

[[noreturn]] void fail(const std::filesystem::path& file, std::string_view what, std::string_view why) {
  throw ConfigError(fmt::format("{}: cannot open {}: {}", file.string(), what, why));
}

}  // namespace

int json_nesting_depth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

std::uint64_t check_input_file(const std::filesystem::path& file, std::string_view what, std::uint64_t max_bytes) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) fail(file, what, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    throw ConfigError(
        fmt::format("{}: is {}, not a regular file (expected {})", file.string(), kind_of(st.st_mode), what));
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) {
    fail(file, what, fmt::format("it has {} bytes, more than the {} bytes allowed", size, max_bytes));
  }
  return size;
}

InputFileDescriptor::InputFileDescriptor(const std::filesystem::path& file, std::string_view what,
                                         std::uint64_t max_bytes) {
  check_input_file(file, what, max_bytes);
  // O_NONBLOCK: a path swapped for a FIFO after the check must not block the open.
  fd_ = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) fail(file, what, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd_);
    fail(file, what, "it changed while being opened");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

InputFileDescriptor::~InputFileDescriptor() {
  ::close(fd_);
}

std::size_t read_at(int fd, std::uint64_t offset, void* to, std::size_t bytes) {
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t got = ::pread(fd, static_cast<char*>(to) + done, bytes - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

std::string read_input_file(const std::filesystem::path& file, std::string_view what, std::uint64_t max_bytes) {
  const InputFileDescriptor input(file, what, max_bytes);
  std::string text(static_cast<std::size_t>(input.size()), '\0');
  text.resize(read_at(input.fd(), 0, text.data(), text.size()));  // a file truncated meanwhile: parse what is there
  return text;
}

nlohmann::json parse_json(std::string_view text, std::string_view origin, int max_depth) {
  if (const int depth = json_nesting_depth(text, max_depth); depth > max_depth) {
    throw ConfigError(fmt::format("{}: invalid JSON: nested more than {} levels deep", origin, max_depth));
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const std::string_view message = e.what();
    constexpr std::string_view kAt = "parse error at ";
    const auto at = message.find(kAt);
    if (at != std::string_view::npos) {
      throw ConfigError(fmt::format("{}: invalid JSON at {}", origin, message.substr(at + kAt.size())));
    }
    throw ConfigError(fmt::format("{}: invalid JSON: {}", origin, message));
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(fmt::format("{}: invalid JSON: {}", origin, e.what()));
  }
}

nlohmann::json read_json_file(const std::filesystem::path& file, std::string_view what, std::uint64_t max_bytes) {
  return parse_json(read_input_file(file, what, max_bytes), file.string());
}

}  // namespace ldmsim
