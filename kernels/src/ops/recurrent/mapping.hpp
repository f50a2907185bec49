// Private: the EP/VP search of the recurrent step kernel (see mapping.cpp and docs/recurrent.md).
#pragma once

#include <vector>

#include "ldmsim/sim/arch.hpp"
#include "recurrent_kernel.hpp"

namespace ldmsim::ops::recurrent {

/// The mapping with `groups` core groups per task and `ep` column partitions (rounded so every partition has
/// columns) for batch slices of `bs`; weights resident when a core's block and buffers fit its ldm. ConfigError
/// when not even streaming fits.
RecurrentMapping make_mapping(const Arch& arch, const CellShape& shape, std::size_t bs, std::size_t ep,
                              std::size_t groups = 1);
/// ep = 1, 2, 4, ... up to the cores of a group and half the padded columns.
std::vector<std::size_t> ep_candidates(const Arch& arch, const CellShape& shape);
/// Cycles of one time step of the step kernel under `m`, simulated on `trial` (a private machine of the arch;
/// what it allocates is freed again).
double simulated_cycles_per_step(Machine& trial, const CellShape& shape, std::size_t bs, const RecurrentMapping& m);
/// ConfigError when a forced number of groups or ep cannot be had on `arch` (more groups than a direction can have,
/// more ep parts than a group has cores), rather than quietly taking fewer.
void check_forced_mapping(const Arch& arch, const CellShape& shape, std::size_t forced_ep, std::size_t forced_groups);
/// For 1, 2, ... groups per task until two in a row bring no better step, one once the best is resident (or only
/// `forced_groups`): on the first,
/// the greedy ep search from ep = 1 while cycles per step fall, on the others ep near the best so far (or only
/// `forced_ep`); the fastest candidate of all.
/// That search for an op about to run on `machine`, on a trial machine of its arch (zero data) kept in the
/// machine's host state (its stacks, local stores and fibers stay warm for the next search), as is each shape's
/// choice.
MappingChoice choose_mapping(Machine& machine, const CellShape& shape, std::size_t forced_ep,
                             std::size_t forced_groups);

}  // namespace ldmsim::ops::recurrent
