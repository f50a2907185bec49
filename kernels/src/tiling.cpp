// The kernel tiling library (see tiling.hpp).
#include "ldmsim/kernels/tiling.hpp"

#include "ldmsim/kernels/matrix_block.hpp"

namespace ldmsim::tiling {

std::vector<DmaHandle> put_runs(Core& core, DevicePtr<f16> base, LdmSpan<f16> buf, std::span<const Run> runs,
                                std::source_location site) {
  std::vector<DmaHandle> handles;
  std::size_t at = 0;  // in buf
  for (std::size_t i = 0; i < runs.size();) {
    // The longest stretch of runs of this length, each the same pitch after the one before.
    std::size_t j = i + 1;
    const std::size_t pitch = j < runs.size() ? runs[j].offset - runs[i].offset : runs[i].count;
    while (j < runs.size() && runs[j].count == runs[i].count && runs[j].offset == runs[j - 1].offset + pitch &&
           pitch >= runs[i].count) {
      ++j;
    }
    if (j == i + 1) {
      handles.push_back(core.put(base + runs[i].offset, LdmSpan<const f16>(buf.subspan(at, runs[i].count)), site));
    } else {
      const BlockShape block{runs[i].offset, pitch, j - i, runs[i].count};
      for (DmaHandle& h : put_block(core, base, buf.subspan(at, block.rows * block.count), block, site))
        handles.push_back(std::move(h));
    }
    for (; i < j; ++i) at += runs[i].count;
  }
  return handles;
}

std::size_t fit_elements_in(std::uint64_t capacity, std::uint64_t used, std::size_t buffers, std::size_t cap) {
  const std::uint64_t free = capacity > used ? capacity - used : 0;
  // Each buffer loses up to an alignment's worth to rounding; keep 64 bytes of slack per buffer.
  const std::uint64_t per = free / buffers > 64 ? (free / buffers - 64) / sizeof(f16) : 2;
  return std::max<std::size_t>(2, floor_even(std::min<std::size_t>(cap, static_cast<std::size_t>(per))));
}

std::size_t fit_elements(Core& core, std::size_t buffers, std::size_t cap, std::size_t reserve_bytes) {
  return fit_elements_in(core.ldm().capacity(), core.ldm().used() + reserve_bytes, buffers, cap);
}

DmaHandle get_as(Core& core, ReadMode mode, LdmSpan<f16> dst, DevicePtr<const f16> src, std::size_t bsize_bytes,
                 std::size_t stride_bytes, std::source_location site) {
  if (mode == ReadMode::kPlan) return {};
  DmaRequest r;
  r.op = DmaOp::kGet;
  const bool row = mode == ReadMode::kRow || mode == ReadMode::kRowOnRead;
  const bool bcast = mode == ReadMode::kBcast || mode == ReadMode::kBcastOnRead;
  r.mode = row ? DmaMode::kRow : bcast ? DmaMode::kBcast : DmaMode::kPe;
  r.replicate_on_read = mode == ReadMode::kRowOnRead || mode == ReadMode::kBcastOnRead;
  r.main = src.addr();
  r.ldm = dst.ldm_addr();
  r.length = dst.size_bytes();
  r.bsize = bsize_bytes;
  r.stride = stride_bytes;
  r.api = row ? "tiling::get (ROW)" : bcast ? "tiling::get (BCAST)" : "tiling::get";
  return core.dma(r, site);
}

RangeRead get_range_as(Core& core, ReadMode mode, LdmSpan<f16> buf, DevicePtr<const f16> base, std::size_t total,
                       Range r, std::source_location site) {
  const std::size_t begin = floor_even(r.begin);
  const std::size_t end = ceil_even(r.end) <= total ? ceil_even(r.end) : r.end;
  return RangeRead{get_as(core, mode, buf.first(end - begin), base + begin, 0, 0, site), r.begin - begin};
}

namespace {

/// A GatheredRun that copies each stretch to out[at, at + n): gather's and gather_runs' own use.
GatheredRun copied_to(f16* out) {
  return [out](std::size_t at, const f16* from, std::size_t n) { std::copy_n(from, n, out + at); };
}

void gather_runs_each(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, const Layout& layout, std::size_t first,
                      std::size_t count, const GatheredRun& use, std::source_location site) {
  const std::size_t piece = buf.size() - 2;
  for_each_run(layout, first, first + count, [&](std::size_t logical, std::size_t offset, std::size_t n) {
    for (std::size_t done = 0; done < n; done += piece) {
      const std::size_t len = std::min(piece, n - done);
      const RangeRead read = get_range(core, buf, base, layout.total, {offset + done, offset + done + len}, site);
      read.handle.wait();
      use(logical - first + done, buf.data() + read.first, len);
    }
  });
}

}  // namespace

void gather_each(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, const Layout& layout, std::size_t first,
                 std::size_t count, const GatheredRun& use, std::source_location site) {
  if (count == 0) return;
  const Range span{layout.offset_of(first), layout.offset_of(first + count - 1) + 1};
  if (span.size() + 2 <= buf.size()) {
    const RangeRead read = get_range(core, buf, base, layout.total, span, site);
    read.handle.wait();
    for_each_run(layout, first, first + count, [&](std::size_t logical, std::size_t offset, std::size_t n) {
      use(logical - first, buf.data() + read.first + (offset - span.begin), n);
    });
    return;
  }
  gather_runs_each(core, buf, base, layout, first, count, use, site);
}

void gather(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, const Layout& layout, std::size_t first,
            std::size_t count, f16* out, std::source_location site) {
  gather_each(core, buf, base, layout, first, count, copied_to(out), site);
}

void gather_runs(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, const Layout& layout, std::size_t first,
                 std::size_t count, f16* out, std::source_location site) {
  gather_runs_each(core, buf, base, layout, first, count, copied_to(out), site);
}

}  // namespace ldmsim::tiling
