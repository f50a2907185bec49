// Spill file I/O with plain POSIX calls: an O_TMPFILE file (or a mkstemp file unlinked at once where the file
// system lacks O_TMPFILE) disappears with the process whatever happens; reads use pread so the write position
// is never disturbed.
#include "trace_spill.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace ldmsim::detail {
namespace {

[[noreturn]] void fail(const std::filesystem::path& directory, const std::string& what, int error) {
  throw std::runtime_error("trace spill file in '" + directory.string() + "': " + what + ": " +
                           std::generic_category().message(error) +
                           " (set MachineOptions::trace_spill_dir or TMPDIR to a writable directory with space)");
}

int open_unlinked(const std::filesystem::path& directory) {
#ifdef O_TMPFILE
  const int fd = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
#endif
  std::string name = (directory / "ldmsim-trace-spill.XXXXXX").string();
  const int fallback = ::mkostemp(name.data(), O_CLOEXEC);
  if (fallback >= 0) ::unlink(name.c_str());
  return fallback;
}

}  // namespace

TraceSpill::TraceSpill(std::filesystem::path directory, int cg, TraceCodec codec)
    : directory_(std::move(directory)), cg_(cg), codec_type_(codec) {}

TraceSpill::~TraceSpill() {
  if (fd_ >= 0) ::close(fd_);
}

void TraceSpill::open_file() {
  fd_ = open_unlinked(directory_);
  if (fd_ < 0) fail(directory_, "cannot create it", errno);
}

void TraceSpill::append_block() {
  if (fd_ < 0) open_file();
  const unsigned char* p = buffer_.data();
  std::size_t left = buffer_.size();
  while (left > 0) {
    const ssize_t n = ::pwrite(fd_, p, left, static_cast<off_t>(size_ + (buffer_.size() - left)));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(directory_, "write of core group " + std::to_string(cg_) + "'s block failed", errno);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  blocks_.push_back({size_, buffer_.size()});
  size_ += buffer_.size();
}

void TraceSpill::append_dma(const DmaChunk& chunk) {
  buffer_.clear();
  codec_.append_dma(buffer_, static_cast<std::uint32_t>(cg_), chunk, 0, chunk.size(), codec_type_);
  append_block();
  dma_events_ += chunk.size();
}

void TraceSpill::append_markers(std::span<const Marker> markers) {
  buffer_.clear();
  append_markers_block(buffer_, static_cast<std::uint32_t>(cg_), markers);
  append_block();
  markers_ += markers.size();
}

void TraceSpill::for_each_block(const std::function<void(std::span<const unsigned char>)>& f) const {
  std::vector<unsigned char> block;
  for (const Entry& e : blocks_) {
    block.resize(static_cast<std::size_t>(e.bytes));
    std::size_t done = 0;
    while (done < block.size()) {
      const ssize_t n = ::pread(fd_, block.data() + done, block.size() - done, static_cast<off_t>(e.offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        fail(directory_, "reading back core group " + std::to_string(cg_) + "'s blocks failed", n < 0 ? errno : EIO);
      done += static_cast<std::size_t>(n);
    }
    f(block);
  }
}

std::size_t TraceSpill::memory_bytes() const {
  return blocks_.capacity() * sizeof(Entry) + buffer_.capacity() + codec_.memory_bytes();
}

}  // namespace ldmsim::detail
