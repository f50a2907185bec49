// Reading user input files safely: only regular files, at most a stated size, and JSON with bounded nesting, so a
// hostile path (/dev/zero, a FIFO, a directory, a huge or deeply nested file) fails with a ConfigError naming the
// file instead of exhausting memory or the stack. Every reader of user files goes through here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ldmsim {

/// Default size cap of a JSON input (arch files, workloads, calibration data).
inline constexpr std::uint64_t kMaxJsonInputBytes = std::uint64_t{64} << 20;
/// Deepest nesting a JSON input may have (objects and arrays).
inline constexpr int kMaxJsonDepth = 256;

/// Checks that `file` names an existing regular file (following symlinks) of at most `max_bytes` and returns its
/// size; ConfigError "FILE: cannot open WHAT: ..." or "FILE: is a FIFO, not a regular file" otherwise (missing,
/// directory, device, FIFO, too large).
std::uint64_t check_input_file(const std::filesystem::path& file, std::string_view what, std::uint64_t max_bytes);
/// An open regular file of at most `max_bytes` (checked as check_input_file, again after opening), for readers
/// that stream it (the ONNX parser) instead of holding a copy. Closes on destruction.
class InputFileDescriptor {
 public:
  InputFileDescriptor(const std::filesystem::path& file, std::string_view what, std::uint64_t max_bytes);
  ~InputFileDescriptor();
  InputFileDescriptor(const InputFileDescriptor&) = delete;
  InputFileDescriptor& operator=(const InputFileDescriptor&) = delete;
  int fd() const { return fd_; }
  std::uint64_t size() const { return size_; }

 private:
  int fd_ = -1;
  std::uint64_t size_ = 0;
};
/// Reads up to `bytes` bytes of `fd` at `offset` into `to` (retrying interrupted and short reads); returns how many
/// were read: fewer only at the end of the file or on a read error.
std::size_t read_at(int fd, std::uint64_t offset, void* to, std::size_t bytes);
/// The whole content of a regular file of at most `max_bytes` (checked before reading).
std::string read_input_file(const std::filesystem::path& file, std::string_view what, std::uint64_t max_bytes);
/// Deepest nesting of objects and arrays in JSON `text` (brackets inside strings skipped); stops counting past
/// `limit` (returning a value above it), so a hostile text costs one pass at most.
int json_nesting_depth(std::string_view text, int limit);
/// Parses JSON text whose nesting is at most `max_depth`; errors name `origin` and the line and column.
nlohmann::json parse_json(std::string_view text, std::string_view origin, int max_depth = kMaxJsonDepth);
/// read_input_file + parse_json, the file name as origin.
nlohmann::json read_json_file(const std::filesystem::path& file, std::string_view what,
                              std::uint64_t max_bytes = kMaxJsonInputBytes);

}  // namespace ldmsim
