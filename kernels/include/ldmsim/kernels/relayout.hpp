// Re-layout on the device: copies a tensor from one padded layout into another with a kernel on every core (DMA,
// simulated and traced), so a tensor whose consumer wants another layout never leaves the simulated machine.
#pragma once

#include <string>

#include "ldmsim/kernels/staging.hpp"
#include "ldmsim/runtime/machine.hpp"

namespace ldmsim {

/// Copies the logical elements of `from` into `to` (same element count; `to` zero-initialized: its padding stays
/// zero) with a device kernel launched under `label`. ConfigError when the element counts differ.
void relayout(Machine& machine, const DeviceTensor& from, const DeviceTensor& to, const std::string& label);

}  // namespace ldmsim
