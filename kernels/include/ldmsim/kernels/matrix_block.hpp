// Blocks of a row-major matrix in device memory moved to and from ldm in as few DMA requests as the 4-byte rule
// allows: `rows` runs of `count` elements, run r starting at element first + r * pitch. With an even pitch the
// block is one strided request (each run widened to even bounds; one contiguous request when the runs touch);
// with an odd pitch, runs alternate in parity: one contiguous request of the whole span when it fits the buffer
// (rows that nearly fill it), else one request per run, all in flight at once.
#pragma once

#include <cstddef>
#include <vector>

#include "ldmsim/kernels/tiling.hpp"

namespace ldmsim::tiling {

/// The shape of a block: rows x count elements, rows `pitch` elements apart, the first at element `first`.
struct BlockShape {
  std::size_t first = 0;
  std::size_t pitch = 0;
  std::size_t rows = 0;
  std::size_t count = 0;
};

/// Elements of ldm a block read needs (each run widened by up to 2 elements).
inline std::size_t block_buffer_elements(std::size_t rows, std::size_t count) {
  return rows * (ceil_even(count) + 2);
}

/// A block read in flight: wait(), then run r's elements start at buf[start(r)].
class BlockRead {
 public:
  void wait() {
    for (DmaHandle& h : handles_) h.wait();
    handles_.clear();
  }
  std::size_t start(std::size_t row) const { return strided_ ? first_ + row * row_elements_ : starts_[row]; }
  /// Moves the requests' handles out (the caller waits for them).
  std::vector<DmaHandle> take_handles() { return std::move(handles_); }

 private:
  friend BlockRead get_block(Core&, LdmSpan<f16>, DevicePtr<const f16>, std::size_t, const BlockShape&, ReadMode);
  std::vector<DmaHandle> handles_;
  bool strided_ = false;
  std::size_t first_ = 0, row_elements_ = 0;
  std::vector<std::size_t> starts_;
};

/// Issues the reads of `block` of a device buffer of `total` elements into buf (block_buffer_elements).
BlockRead get_block(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, std::size_t total, const BlockShape& block,
                    ReadMode mode = ReadMode::kPe);

/// Writes rows x count elements packed in buf (row r at buf[r * count]) to `block` of a device buffer. The caller
/// owns whole 4-byte words: block.first and count even with an even pitch, or (odd pitch) count == pitch and
/// block.first even, so the rows form one contiguous even range. Returns the handles to wait for.
std::vector<DmaHandle> put_block(Core& core, DevicePtr<f16> base, LdmSpan<f16> buf, const BlockShape& block);

}  // namespace ldmsim::tiling
