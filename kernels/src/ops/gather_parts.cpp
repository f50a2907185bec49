// The part-gathering kernel (see gather_parts.hpp). Each core owns destination tiles; for each stretch of logical
// elements contiguous in both the destination and its part's source (the trailing dimensions the part covers whole,
// and a stretch of the next one), a read; a part's stretches evenly spaced go as one strided read.
#include "ldmsim/kernels/gather_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "ldmsim/kernels/matrix_block.hpp"
#include "op_support.hpp"

namespace ldmsim {

namespace {

constexpr std::size_t kMaxRank = 6;

struct PartArgs {
  DevicePtr<const f16> src;
  Layout layout;
  std::array<std::uint64_t, kMaxRank> src_stride{};  ///< logical elements per step of each dimension
  std::array<std::uint64_t, kMaxRank> begin{};       ///< the box's first index in the source
  std::uint64_t out_begin = 0;                       ///< where the part starts along the axis
  std::uint64_t length = 0;
  std::size_t whole_from = kMaxRank;  ///< dimensions from here on are whole in both source and destination
  /// The bytes between the source's runs are its own padding; false for a box of a larger buffer (its gaps hold
  /// another writer's data): then no read spans them.
  bool owns_gaps = true;
};

struct GatherArgs {
  std::size_t rank = 0;
  std::size_t axis = 0;
  std::array<std::uint64_t, kMaxRank> dims{};
  std::array<std::uint64_t, kMaxRank> stride{};  ///< destination's logical strides
  std::vector<PartArgs> parts;
  DevicePtr<f16> out;
  Layout out_layout;
  bool out_owns_padding = true;  ///< false: a box of a larger buffer, whose gaps are not written
};

void gather_kernel(Core& core, const GatherArgs& a) {
  // The stretches of a part that are each one run of its layout (a channel's rows of a piece, channel after channel)
  // are read together, part by part, by tiling::read_runs: evenly spaced ones by one strided request where the
  // engine serves that for less. A stretch over padding is read as before, one widened read of its span.
  std::vector<std::vector<tiling::Run>> runs(a.parts.size());
  std::vector<std::vector<f16*>> to(a.parts.size());
  auto fill = [&](std::size_t first, std::size_t last, LdmSpan<f16> staging, LdmSpan<f16> logical) {
    for (std::size_t l = first; l < last;) {
      std::array<std::uint64_t, kMaxRank> idx{};
      std::uint64_t rest = l;
      for (std::size_t d = 0; d < a.rank; ++d) idx[d] = rest / a.stride[d], rest %= a.stride[d];
      std::size_t p = 0;
      while (idx[a.axis] >= a.parts[p].out_begin + a.parts[p].length) ++p;
      const PartArgs& part = a.parts[p];
      std::uint64_t src = 0;
      for (std::size_t d = 0; d < a.rank; ++d) {
        const std::uint64_t i = d == a.axis ? idx[d] - part.out_begin : idx[d];
        src += (part.begin[d] + i) * part.src_stride[d];
      }
      // Contiguous in both: the whole trailing dimensions, and the rest of dimension whole_from - 1 in the box.
      std::uint64_t run = last - l;
      if (part.whole_from > 0) {
        const std::size_t j = part.whole_from - 1;
        const std::uint64_t end = j == a.axis ? part.out_begin + part.length : a.dims[j];
        run = (end - idx[j]) * a.stride[j] - l % a.stride[j];
      }
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(last - l, run));
      const auto from = static_cast<std::size_t>(src);
      f16* out = logical.data() + (l - first);
      const std::size_t offset = part.layout.offset_of(from);
      if (part.layout.offset_of(from + n - 1) + 1 - offset == n) {  // one run of the layout
        runs[p].push_back({offset, n});
        to[p].push_back(out);
      } else if (part.owns_gaps) {
        tiling::gather(core, staging, part.src, part.layout, from, n, out);
      } else {
        tiling::gather_runs(core, staging, part.src, part.layout, from, n, out);
      }
      l += n;
    }
    for (std::size_t p = 0; p < a.parts.size(); ++p) {
      if (!runs[p].empty()) {
        tiling::read_runs(core, staging, a.parts[p].src, a.parts[p].layout.total, runs[p], to[p], a.parts[p].owns_gaps);
      }
      runs[p].clear();
      to[p].clear();
    }
  };
  std::uint64_t shortest = std::numeric_limits<std::uint64_t>::max();  // the shortest contiguous run of any part
  for (const PartArgs& p : a.parts) {
    const std::size_t j = p.whole_from == 0 ? 0 : p.whole_from - 1;
    shortest = std::min(shortest, (j == a.axis ? p.length : a.dims[j]) * a.stride[j]);
  }
  if (a.out_owns_padding) {
    tiling::write_gathered_tiles(core, a.out, a.out_layout, fill, tiling::gather_share(shortest));
  } else {
    tiling::write_gathered_runs(core, a.out, a.out_layout, fill, tiling::gather_share(shortest));
  }
}

}  // namespace

void gather_parts(Machine& machine, const Shape& shape, std::size_t axis, std::span<const GatherPart> parts,
                  const DeviceTensor& to, const std::string& label) {
  const std::size_t rank = shape.rank();
  if (rank == 0 || rank > kMaxRank || axis >= rank || parts.empty()) {
    throw ConfigError(
        fmt::format("{}: cannot gather {} parts along axis {} of {}", label, parts.size(), axis, shape.str()));
  }
  GatherArgs a;
  a.rank = rank, a.axis = axis, a.out = to.ptr, a.out_layout = to.layout(), a.out_owns_padding = to.owns_padding;
  for (std::size_t d = rank; d-- > 0;) {
    a.dims[d] = shape[d];
    a.stride[d] = d + 1 == rank ? 1 : a.stride[d + 1] * shape[d + 1];
  }
  std::uint64_t at = 0;
  for (const GatherPart& part : parts) {
    if (part.shape.rank() != rank || part.begin.size() != rank) {
      throw ConfigError(fmt::format("{}: a part of rank {} for a {}-D tensor", label, part.shape.rank(), rank));
    }
    PartArgs p;
    p.src = DevicePtr<const f16>(part.source.ptr);
    p.layout = part.source.layout();
    p.owns_gaps = part.source.owns_padding;
    p.out_begin = at, p.length = part.length;
    for (std::size_t d = rank; d-- > 0;) {
      p.src_stride[d] = d + 1 == rank ? 1 : p.src_stride[d + 1] * part.shape[d + 1];
      p.begin[d] = part.begin[d];
      const std::uint64_t extent = d == axis ? part.length : shape[d];
      if (part.begin[d] + extent > part.shape[d]) {
        throw ConfigError(fmt::format("{}: part [{}, +{}) leaves dimension {} of {}", label, part.begin[d], extent, d,
                                      part.shape.str()));
      }
    }
    // Trailing dimensions covered whole by the box, in a destination that holds them whole too.
    p.whole_from = rank;
    while (p.whole_from > 0) {
      const std::size_t d = p.whole_from - 1;
      const std::uint64_t extent = d == axis ? part.length : shape[d];
      if (extent != part.shape[d] || extent != shape[d]) break;
      --p.whole_from;
    }
    at += part.length;
    a.parts.push_back(p);
  }
  if (at != shape[axis]) {
    throw ConfigError(fmt::format("{}: the parts hold {} of the {} indices of axis {}", label, at, shape[axis], axis));
  }
  ops::launch_all(machine, label, gather_kernel, a);
}

}  // namespace ldmsim
