// The re-layout kernel. Each core owns even-bounded destination tiles of the target buffer; for a tile it gathers
// the logical elements stored there from the source layout (tiling::gather: one widened DMA when they fit) and
// places them at their offsets in the tile, padding positions left zero.
#include "ldmsim/kernels/relayout.hpp"

#include <algorithm>

#include "op_support.hpp"

namespace ldmsim {

namespace {

struct RelayoutArgs {
  DevicePtr<const f16> src;
  Layout from;
  DevicePtr<f16> dst;
  Layout to;
};

void relayout_kernel(Core& core, const RelayoutArgs& a) {
  tiling::write_gathered_tiles(core, a.dst, a.to,
                               [&](std::size_t first, std::size_t last, LdmSpan<f16> staging, LdmSpan<f16> logical) {
                                 tiling::gather(core, staging, a.src, a.from, first, last - first, logical.data());
                               });
}

}  // namespace

void relayout(Machine& machine, const DeviceTensor& from, const DeviceTensor& to, const std::string& label) {
  if (from.layout().shape.elements() != to.layout().shape.elements()) {
    throw ConfigError(fmt::format("{}: cannot re-layout {} elements into {}", label, from.layout().shape.elements(),
                                  to.layout().shape.elements()));
  }
  ops::launch_all(machine, label, relayout_kernel,
                  RelayoutArgs{DevicePtr<const f16>(from.ptr), from.layout(), to.ptr, to.layout()});
}

}  // namespace ldmsim
