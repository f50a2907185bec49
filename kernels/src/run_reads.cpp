// Reading runs of a device buffer in as few requests as their spacing allows (see matrix_block.hpp, read_runs).
#include <algorithm>

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

}  // namespace

void read_runs(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, std::size_t total, std::span<const Run> runs,
               std::span<f16* const> to, std::source_location site) {
  for (std::size_t i = 0; i < runs.size();) {
    // The longest stretch of runs of this length, each the same pitch after the one before, that buf holds.
    const std::size_t count = runs[i].count;
    std::size_t j = i + 1;
    if (j < runs.size() && runs[j].offset > runs[i].offset) {
      const std::size_t pitch = runs[j].offset - runs[i].offset;
      while (j < runs.size() && runs[j].count == count && runs[j].offset > runs[j - 1].offset &&
             runs[j].offset - runs[j - 1].offset == pitch && pitch >= count &&
             block_buffer_elements(j + 1 - i, count) <= buf.size()) {
        ++j;
      }
      const BlockShape block{runs[i].offset, pitch, j - i, count};
      if (j > i + 1 &&
          block_read_cost(core, base, total, block, buf.size()) < separate_cost(core, base, runs.subspan(i, j - i))) {
        BlockRead read = get_block(core, buf, base, total, block, ReadMode::kPe, site);
        read.wait();
        for (std::size_t r = 0; r < j - i; ++r) std::copy_n(buf.data() + read.start(r), count, to[i + r]);
        i = j;
        continue;
      }
    }
    // A run on its own: contiguous reads of up to buf's size.
    const std::size_t piece = buf.size() - 2;
    for (std::size_t done = 0; done < count; done += piece) {
      const std::size_t len = std::min(piece, count - done);
      const std::size_t at = runs[i].offset + done;
      const RangeRead one = get_range(core, buf, base, total, {at, at + len}, site);
      one.handle.wait();
      std::copy_n(buf.data() + one.first, len, to[i] + done);
    }
    ++i;
  }
}

}  // namespace ldmsim::tiling
