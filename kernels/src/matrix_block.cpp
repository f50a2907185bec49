// Matrix blocks to and from ldm (see matrix_block.hpp).
#include "ldmsim/kernels/matrix_block.hpp"

#include <algorithm>
#include <cstdint>

namespace ldmsim::tiling {
namespace {

/// True when a request with these byte fields fits the arch's descriptor widths.
bool fits_fields(const Core& core, std::size_t length, std::size_t bsize, std::size_t stride) {
  const DmaFieldWidths& f = core.arch().dma.fields;
  const auto below = [](std::size_t v, std::uint32_t bits) { return bits >= 64 || v < (std::uint64_t{1} << bits); };
  return below(length, f.length_bits) && below(bsize, f.bsize_bits) && below(stride, f.stride_bits);
}

/// How many requests to cut a read of `bytes` into: the timing model serves requests on parallel channels, so
/// one big request moves at a channel's share of the bandwidth; pieces of at least kMinPieceBytes, at most one
/// per channel.
std::size_t piece_count(const Core& core, std::size_t bytes) {
  constexpr std::size_t kMinPieceBytes = 2048;
  const auto channels = static_cast<std::size_t>(std::max(1.0, core.arch().dma.timing.value("channels", 1.0)));
  return std::clamp<std::size_t>(bytes / kMinPieceBytes, 1, channels);
}

}  // namespace

BlockRead get_block(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, std::size_t total, const BlockShape& block,
                    ReadMode mode) {
  BlockRead read;
  if (block.rows == 0 || block.count == 0) return read;
  const std::size_t begin = floor_even(block.first);
  const std::size_t width = ceil_even(block.first + block.count) - begin;
  const std::size_t last_end = begin + (block.rows - 1) * block.pitch + width;
  const std::size_t bytes = block.rows * width * sizeof(f16);
  if (block.pitch % 2 == 0 && block.pitch >= width && last_end <= total &&
      fits_fields(core, bytes, width * sizeof(f16), (block.pitch - width) * sizeof(f16))) {
    read.strided_ = true;
    read.first_ = block.first - begin;
    read.row_elements_ = width;
    // Whole rows per piece (a contiguous block may also be cut inside a row, at even elements).
    const std::size_t pieces = std::min(piece_count(core, bytes), block.rows);
    for (std::size_t p = 0; p < pieces; ++p) {
      const std::size_t r0 = block.rows * p / pieces, r1 = block.rows * (p + 1) / pieces;
      auto dst = buf.subspan(r0 * width, (r1 - r0) * width);
      const DevicePtr<const f16> src = base + begin + r0 * block.pitch;
      if (block.pitch == width || r1 - r0 == 1) {
        read.handles_.push_back(get_as(core, mode, dst, src));
      } else {
        read.handles_.push_back(get_as(core, mode, dst, src, width * sizeof(f16), (block.pitch - width) * sizeof(f16)));
      }
    }
    return read;
  }
  // An odd pitch: when the rows nearly fill their span (a window of whole input rows), one contiguous read of
  // the span, gaps included, beats a request per row.
  const std::size_t span_end = block.first + (block.rows - 1) * block.pitch + block.count;
  const std::size_t end = ceil_even(span_end) <= total ? ceil_even(span_end) : span_end;
  if (end - begin <= buf.size() && fits_fields(core, (end - begin) * sizeof(f16), 0, 0)) {
    read.strided_ = true;
    read.first_ = block.first - begin;
    read.row_elements_ = block.pitch;
    const std::size_t length = end - begin, pieces = piece_count(core, length * sizeof(f16));
    for (std::size_t p = 0; p < pieces; ++p) {  // cut at even elements so every piece stays 4-byte legal
      const std::size_t from = floor_even(length * p / pieces),
                        to = p + 1 == pieces ? length : floor_even(length * (p + 1) / pieces);
      if (to > from) read.handles_.push_back(get_as(core, mode, buf.subspan(from, to - from), base + begin + from));
    }
    return read;
  }
  const std::size_t slot = ceil_even(block.count) + 2;
  for (std::size_t r = 0; r < block.rows; ++r) {
    const std::size_t at = block.first + r * block.pitch;
    RangeRead one = get_range_as(core, mode, buf.subspan(r * slot, slot), base, total, {at, at + block.count});
    read.handles_.push_back(one.handle);
    read.starts_.push_back(r * slot + one.first);
  }
  return read;
}

std::vector<DmaHandle> put_block(Core& core, DevicePtr<f16> base, LdmSpan<f16> buf, const BlockShape& block) {
  std::vector<DmaHandle> handles;
  if (block.rows == 0 || block.count == 0) return handles;
  const std::size_t elements = block.rows * block.count;
  const LdmSpan<const f16> src(buf.first(elements));
  const std::size_t gap = block.pitch - block.count;
  if (block.rows == 1 || gap == 0) {
    handles.push_back(core.put(base + block.first, src));
  } else if (fits_fields(core, elements * sizeof(f16), block.count * sizeof(f16), gap * sizeof(f16))) {
    handles.push_back(core.put_strided(base + block.first, src, block.count * sizeof(f16), gap * sizeof(f16)));
  } else {
    for (std::size_t r = 0; r < block.rows; ++r) {
      handles.push_back(core.put(base + block.first + r * block.pitch,
                                 LdmSpan<const f16>(buf.subspan(r * block.count, block.count))));
    }
  }
  return handles;
}

}  // namespace ldmsim::tiling
