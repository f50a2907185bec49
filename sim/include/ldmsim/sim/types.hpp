// Basic simulated-machine quantities shared by every layer: time, addresses and core coordinates.
#pragma once

#include <cstdint>
#include <limits>

namespace ldmsim {

/// Simulated time in core clock cycles; seconds = cycles / Arch::clock_hz.
using Cycle = std::uint64_t;
/// An address in the simulated 64-bit device main-memory space (never a host pointer).
using DeviceAddr = std::uint64_t;
/// A byte offset inside one compute core's local store, in [0, ldm_bytes).
using LdmAddr = std::uint32_t;

inline constexpr Cycle kNoCycle = std::numeric_limits<Cycle>::max();

/// Where something happened: core group and cg-local core id (row * cols + col). -1 means "not on a core".
struct CoreLocation {
  int cg = -1;
  int core = -1;
};

}  // namespace ldmsim
