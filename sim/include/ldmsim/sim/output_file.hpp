// Writing output files safely: every file ldmsim writes (.npy outputs, stats.json, traces, exports) goes through
// here. A target must be missing or a regular file in an existing directory, so a run never replaces a device,
// FIFO, directory or symlink; the content goes to a fresh temporary in the same directory and is renamed over the
// target only when complete and flushed, so a failed or interrupted write leaves the old file whole.
#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace ldmsim {

/// ConfigError naming `what` and `target` unless ldmsim may write it: its directory exists and the target is missing
/// or a regular file (not a symlink, directory, device, FIFO or socket).
void check_output_target(const std::filesystem::path& target, std::string_view what);

/// ConfigError naming `what` unless `name` is usable as a file name inside an output directory: 1 to 200
/// characters of letters, digits, '_', '-' and '.', not starting with '.' (so no separators, no "..", no NUL or
/// control characters, no hidden files).
void check_output_name(std::string_view name, std::string_view what);

/// A file written atomically. The constructor checks the target (check_output_target) and creates a temporary
/// ".NAME.tmp-PID-N" beside it (exclusively); write() appends; commit() flushes it to disk and renames it over the
/// target. Destroyed without commit() (an error, an exception), it removes the temporary and the target is
/// untouched. I/O errors throw std::runtime_error naming the target.
class AtomicFile {
 public:
  AtomicFile(std::filesystem::path target, std::string_view what);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  void write(const void* data, std::size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  /// The temporary as a stream, for writers that take one (exports); its errors are caught by commit().
  std::ostream& stream() { return out_; }
  void commit();

  const std::filesystem::path& target() const { return target_; }
  const std::filesystem::path& temporary() const { return temporary_; }

 private:
  [[noreturn]] void fail(const std::string& problem) const;

  std::filesystem::path target_;
  std::filesystem::path temporary_;
  std::string what_;
  std::ofstream out_;
  bool committed_ = false;
};

/// Writes `content` to `target` through an AtomicFile.
void write_file_atomically(const std::filesystem::path& target, std::string_view content, std::string_view what);

}  // namespace ldmsim
