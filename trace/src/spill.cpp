// Spill file I/O with plain POSIX calls: an O_TMPFILE file (or a mkstemp file unlinked at once where the file
// system lacks O_TMPFILE) disappears with the process whatever happens; reads use pread so the write position
// is never disturbed. Raw blocks are gathered from the chunk's columns with pwritev.
#include "spill.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace ldmsim::detail {
namespace {

[[noreturn]] void fail(const std::filesystem::path& directory, const std::string& what, int error) {
  throw TraceSpillError("trace spill file in '" + directory.string() + "': " + what + ": " +
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
  std::array<iovec, 1> whole{iovec{buffer_.data(), buffer_.size()}};
  write_parts(whole);
  blocks_.push_back({size_, buffer_.size()});
  size_ += buffer_.size();
}

void TraceSpill::append_dma(const DmaChunk& chunk) {
  if (codec_type_ == TraceCodec::kRaw && std::endian::native == std::endian::little) {
    append_raw_columns(chunk);
  } else {
    buffer_.clear();
    codec_.append_dma(buffer_, static_cast<std::uint32_t>(cg_), chunk, 0, chunk.size(), codec_type_);
    append_block();
  }
  dma_events_ += chunk.size();
}

void TraceSpill::append_raw_columns(const DmaChunk& chunk) {
  // A raw block is the columns as they lie in memory: gather them straight into the file, no staging copy.
  const std::size_t n = chunk.size();
  const std::size_t strided = chunk.strided.size();
  const std::uint64_t payload = raw_dma_payload_bytes(n, strided);
  std::array<unsigned char, kBlockHeaderBytes> header{};
  put_block_header(header.data(),
                   {kDmaBlock, static_cast<std::uint32_t>(cg_), static_cast<std::uint32_t>(TraceCodec::kRaw), payload,
                    static_cast<std::uint32_t>(n)});
  std::array<unsigned char, 4> strided_count{};
  put_le(strided_count.data(), static_cast<std::uint32_t>(strided));
  const auto part = [](std::span<const unsigned char> bytes) {
    return iovec{const_cast<unsigned char*>(bytes.data()), bytes.size()};
  };
  const auto columns = raw_columns(chunk, 0, n);
  std::array<iovec, 9> parts{
      part(header),
      part(columns[0]),
      part(columns[1]),
      part(columns[2]),
      part(columns[3]),
      part(columns[4]),
      part(columns[5]),
      part(strided_count),
      part({reinterpret_cast<const unsigned char*>(chunk.strided.data()), strided * kStridedBytes})};
  write_parts(parts);
  blocks_.push_back({size_, kBlockHeaderBytes + payload});
  size_ += kBlockHeaderBytes + payload;
}

void TraceSpill::write_parts(std::span<iovec> parts) {
  if (fd_ < 0) open_file();
  std::uint64_t at = size_;
  while (!parts.empty()) {
    const ssize_t n = ::pwritev(fd_, parts.data(), static_cast<int>(parts.size()), static_cast<off_t>(at));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(directory_, "write of core group " + std::to_string(cg_) + "'s block failed", errno);
    }
    at += static_cast<std::uint64_t>(n);
    // Skip what was written (a short write leaves a partial part to finish).
    auto done = static_cast<std::size_t>(n);
    while (!parts.empty() && done >= parts.front().iov_len) {
      done -= parts.front().iov_len;
      parts = parts.subspan(1);
    }
    if (!parts.empty()) {
      parts.front().iov_base = static_cast<char*>(parts.front().iov_base) + done;
      parts.front().iov_len -= done;
    }
  }
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
