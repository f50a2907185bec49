// The DMA request builder of the tests: one definition instead of a copy per test file.
#pragma once

#include <cstdint>
#include <string_view>

#include "ldmsim/dma/request.hpp"

namespace ldmsim::testing {

/// A PE request of `length` bytes between main address `main` and ldm offset `ldm` (strided when bsize != 0),
/// named `api` in diagnostics.
inline DmaRequest dma_request(DmaOp op, DeviceAddr main, std::uint64_t ldm, std::uint64_t length,
                              std::uint64_t bsize = 0, std::uint64_t stride = 0, std::string_view api = "Core::dma") {
  DmaRequest r;
  r.op = op;
  r.main = main;
  r.ldm = ldm;
  r.length = length;
  r.bsize = bsize;
  r.stride = stride;
  r.api = api;
  return r;
}

/// A PE get (see dma_request).
inline DmaRequest dma_get(DeviceAddr main, std::uint64_t ldm, std::uint64_t length, std::uint64_t bsize = 0,
                          std::uint64_t stride = 0) {
  return dma_request(DmaOp::kGet, main, ldm, length, bsize, stride);
}

}  // namespace ldmsim::testing
