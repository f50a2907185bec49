// Private: the EP/VP search of the recurrent step kernel (see mapping.cpp and docs/recurrent.md).
#pragma once

#include <vector>

#include "ldmsim/sim/arch.hpp"
#include "recurrent_kernel.hpp"

namespace ldmsim::ops::recurrent {

/// The mapping with `ep` column partitions (rounded so every partition has columns) for batch slices of `bs`;
/// weights resident when a core's block and buffers fit its ldm. ConfigError when not even streaming fits.
RecurrentMapping make_mapping(const Arch& arch, const CellShape& shape, std::size_t bs, std::size_t ep);
/// ep = 1, 2, 4, ... up to the cores of a group and half the padded columns.
std::vector<std::size_t> ep_candidates(const Arch& arch, const CellShape& shape);
/// Cycles of one time step of the step kernel under `m`, simulated on a private machine.
double simulated_cycles_per_step(const Arch& arch, const CellShape& shape, std::size_t bs, const RecurrentMapping& m);
/// Greedy from ep = 1 while cycles per step fall (or only `forced_ep` when non-zero).
MappingChoice choose_mapping(const Arch& arch, const CellShape& shape, std::size_t bs, std::size_t forced_ep);

}  // namespace ldmsim::ops::recurrent
