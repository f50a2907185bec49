// Names of DMA directions and modes, as they appear in messages, traces and stats.
#include "ldmsim/dma/request.hpp"

namespace ldmsim {

std::string_view to_string(DmaOp op) noexcept {
  return op == DmaOp::kGet ? "get" : "put";
}

std::string_view to_string(DmaMode mode) noexcept {
  switch (mode) {
    case DmaMode::kPe:
      return "PE";
    case DmaMode::kBcast:
      return "BCAST";
    case DmaMode::kRow:
      return "ROW";
  }
  return "?";
}

}  // namespace ldmsim
