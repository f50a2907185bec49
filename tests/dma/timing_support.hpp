// Test helpers for timing-model tests: an arch with a given dma.timing tree, and a request builder.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>

#include "ldmsim/dma/request.hpp"
#include "ldmsim/sim/arch.hpp"
#include "support/dma_requests.hpp"

namespace ldmsim::testing {

/// The tiny preset with `timing` as its dma.timing tree.
inline Arch with_timing(nlohmann::json timing) {
  Arch a = Arch::preset("tiny");
  a.dma.timing = std::move(timing);
  return a;
}

/// A PE get (or `op`) of `length` bytes at `main` (strided when bsize != 0).
inline DmaRequest req(DeviceAddr main, std::uint64_t length, std::uint64_t bsize = 0, std::uint64_t stride = 0,
                      DmaOp op = DmaOp::kGet) {
  return dma_request(op, main, 0, length, bsize, stride, "dma");
}

}  // namespace ldmsim::testing
