// Gathering a tensor from parts of others on the device (the split executor's exchanges, docs/splitting.md): each
// part is a box of a source tensor, the parts laid one after another along one axis of the destination. A slice
// is one part; putting pieces together, or a piece with its neighbours' halo rows, is one launch.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ldmsim/kernels/shape.hpp"
#include "ldmsim/kernels/staging.hpp"
#include "ldmsim/runtime/machine.hpp"

namespace ldmsim {

/// The box of `source` (logical shape `shape`) that starts at `begin` (one index per dimension); its extent is the
/// destination's, except along the gathering axis, where it is `length`.
struct GatherPart {
  DeviceTensor source;
  Shape shape;
  std::vector<std::uint64_t> begin;
  std::uint64_t length = 0;
};

/// Writes the parts one after another along `axis` into `to` (logical shape `shape`, zero-initialised padding
/// stays zero) with a device kernel on every core of `machine`. ConfigError when the parts do not fit `shape`.
void gather_parts(Machine& machine, const Shape& shape, std::size_t axis, std::span<const GatherPart> parts,
                  const DeviceTensor& to, const std::string& label);

}  // namespace ldmsim
