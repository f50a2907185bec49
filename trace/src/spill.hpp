// The spill file of one core group's trace: full DMA chunks and marker lists, encoded as finished trace blocks
// and appended to an unlinked temporary file, so a recording holds only its open chunk in memory and a trace
// writer can copy the blocks into the trace file as they are.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <vector>

#include "block.hpp"
#include "ldmsim/trace/recorder.hpp"

namespace ldmsim::detail {

class TraceSpill {
 public:
  /// Nothing is created until the first append. Blocks are encoded with `codec`.
  TraceSpill(std::filesystem::path directory, int cg, TraceCodec codec);
  ~TraceSpill();
  TraceSpill(const TraceSpill&) = delete;
  TraceSpill& operator=(const TraceSpill&) = delete;

  /// Encodes and appends one DMA block / one markers block. I/O failures throw std::runtime_error naming the
  /// directory and the system error.
  void append_dma(const DmaChunk& chunk);
  void append_markers(std::span<const Marker> markers);

  /// Reads the blocks back in order, one at a time, and calls f(block) with its header and payload bytes.
  void for_each_block(const std::function<void(std::span<const unsigned char>)>& f) const;

  TraceCodec codec() const { return codec_type_; }
  std::uint64_t dma_events() const { return dma_events_; }
  std::uint64_t markers() const { return markers_; }
  std::size_t blocks() const { return blocks_.size(); }
  /// Bytes in the spill file.
  std::uint64_t file_bytes() const { return size_; }
  /// Host memory held: the block index and the encoder's buffers.
  std::size_t memory_bytes() const;

 private:
  void append_block();  // writes buffer_ as one block
  void append_raw_columns(const DmaChunk& chunk);
  void write_parts(std::span<iovec> parts);  // at the end of the file; consumes `parts`
  void open_file();

  struct Entry {
    std::uint64_t offset;
    std::uint64_t bytes;
  };
  std::filesystem::path directory_;
  int cg_;
  TraceCodec codec_type_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::uint64_t dma_events_ = 0;
  std::uint64_t markers_ = 0;
  std::vector<Entry> blocks_;
  BlockCodec codec_;
  std::vector<unsigned char> buffer_;
};

}  // namespace ldmsim::detail
