// Reading runs of a device buffer in as few requests as their spacing allows (see matrix_block.hpp, read_runs).
#include <algorithm>
#include <stdexcept>

#include "ldmsim/kernels/matrix_block.hpp"

namespace ldmsim::tiling {

namespace {

/// Engine time of reading each run on its own (widened to whole 4-byte words).
double separate_cost(const Core& core, DevicePtr<const f16> base, std::span<const Run> runs) {
  double cycles = 0;
  for (const Run& r : runs) {
    const std::size_t begin = floor_even(r.offset), end = ceil_even(r.offset + r.count);
    cycles += core.get_service_cycles((base + begin).addr(), (end - begin) * sizeof(f16));
  }
  return cycles;
}

/// Whether get_block reads `rows` runs of `count` elements `pitch` apart within a buffer of `buffer` elements as one
/// block: strided with an even pitch (each run widened by up to 2 elements), else the span, gaps included.
bool block_fits(std::size_t rows, std::size_t count, std::size_t pitch, std::size_t buffer) {
  if (block_buffer_elements(rows, count) > buffer) return false;
  return pitch % 2 == 0 || (rows - 1) * pitch + count + 2 <= buffer;
}

/// Reads one run on its own: contiguous reads of up to buf's size.
void read_run(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, std::size_t total, const Run& run, f16* to,
              std::source_location site) {
  const std::size_t piece = buf.size() - 2;
  for (std::size_t done = 0; done < run.count; done += piece) {
    const std::size_t len = std::min(piece, run.count - done);
    const std::size_t at = run.offset + done;
    const RangeRead one = get_range(core, buf, base, total, {at, at + len}, site);
    one.handle.wait();
    std::copy_n(buf.data() + one.first, len, to + done);
  }
}

}  // namespace

void read_runs(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, std::size_t total, std::span<const Run> runs,
               std::span<f16* const> to, bool gaps_readable, std::source_location site) {
  if (buf.size() < 3) throw std::logic_error("read_runs: the buffer must hold at least 3 elements");
  for (std::size_t i = 0; i < runs.size();) {
    // The longest stretch of runs of this length, each the same pitch after the one before, that get_block reads
    // as one block within buf.
    const std::size_t count = runs[i].count;
    std::size_t j = i + 1;
    if (j < runs.size() && runs[j].offset > runs[i].offset) {
      const std::size_t pitch = runs[j].offset - runs[i].offset;
      while (j < runs.size() && runs[j].count == count && runs[j].offset > runs[j - 1].offset &&
             runs[j].offset - runs[j - 1].offset == pitch && pitch >= count &&
             block_fits(j + 1 - i, count, pitch, buf.size())) {
        ++j;
      }
      const BlockShape block{runs[i].offset, pitch, j - i, count, gaps_readable};
      if (j > i + 1 &&
          block_read_cost(core, base, total, block, buf.size()) < separate_cost(core, base, runs.subspan(i, j - i))) {
        BlockRead read = get_block(core, buf, base, total, block, ReadMode::kPe, site);
        read.wait();
        for (std::size_t r = 0; r < j - i; ++r) std::copy_n(buf.data() + read.start(r), count, to[i + r]);
        i = j;
        continue;
      }
    }
    // The stretch costs less run by run (or is one run): each on its own, and on past the stretch.
    for (; i < j; ++i) read_run(core, buf, base, total, runs[i], to[i], site);
  }
}

}  // namespace ldmsim::tiling
