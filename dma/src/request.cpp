// Names of DMA directions and modes, as they appear in messages, traces and stats.
#include "ldmsim/dma/request.hpp"

#include "ldmsim/sim/enum_names.hpp"

namespace ldmsim {

constexpr auto kDmaOpNames = enum_names<DmaOp>({{DmaOp::kGet, "get"}, {DmaOp::kPut, "put"}});

std::string_view to_string(DmaOp op) noexcept {
  return kDmaOpNames.name(op);
}

constexpr auto kDmaModeNames = enum_names<DmaMode>({
    {DmaMode::kPe, "PE"},
    {DmaMode::kBcast, "BCAST"},
    {DmaMode::kRow, "ROW"},
});

std::string_view to_string(DmaMode mode) noexcept {
  return kDmaModeNames.name(mode);
}

}  // namespace ldmsim
