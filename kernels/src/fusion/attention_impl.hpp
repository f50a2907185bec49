// Private: the attention kernel's arguments and entry point (attention_kernel.cpp), launched by the attention op.
#pragma once

#include <cstdint>

#include "fused_kernel_impl.hpp"
#include "ldmsim/kernels/attention_kernel.hpp"

namespace ldmsim::fusion {

struct AttentionArgs {
  /// The program's arguments; the score input and the probabilities output have no tensor (null pointers).
  KernelArgs program;
  std::size_t score_input = 0;
  AttentionShape shape;
  std::uint64_t parts = 1;
  bool prefetch = false;
  bool q_broadcast = false;
  const std::vector<bool>* per_batch = nullptr;  ///< AttentionMapping::per_batch
  DevicePtr<const f16> q, kt, v;                 ///< hold Q [s, d], Kt [d, t] (or K [t, d]) and V [t, e] per batch
  QueryScale scale = QueryScale::kNone;
  DevicePtr<const f16> scalar;    ///< Q's scale (scale not kNone)
  DevicePtr<f16> y;               ///< [batches * s, e], unpadded
  AttentionViews views;           ///< where q's, kt's, v's and y's matrices lie (packed: in the order above)
  std::uint64_t memo_source = 0;  ///< TileMemo source id of this launch's Kt and V floats
};

void attention_kernel(Core& core, const AttentionArgs& args);

/// ldm bytes a core holds for `batches` batches' Kt and V (with `q_rows` query rows of Q each when Q is read by
/// BCAST, else a tile's) and `tile_rows` query rows' Y (beyond the program's).
std::uint64_t attention_buffer_bytes(const AttentionShape& shape, std::uint64_t tile_rows, std::uint64_t batches,
                                     std::uint64_t q_rows);

/// Per program input: whether its value is the same for every query row of a batch (its query-row axis is 1) but
/// not for every batch (those are read whole, resident).
std::vector<bool> per_batch_inputs(const FusedProgram& program, std::size_t score_input);

/// ldm bytes of the per-batch inputs' buffers, for `batches` batches at once.
std::uint64_t per_batch_bytes(const FusedProgram& program, const std::vector<bool>& per_batch, std::uint64_t batches);

/// The kernel's cycles on `arch` with every operand in each group's own memory (attention_estimate.cpp): the
/// placement's estimate of the op, not the simulation.
double estimate_attention_cycles(const FusedProgram& program, std::size_t score_input, const AttentionShape& shape,
                                 const Arch& arch);

}  // namespace ldmsim::fusion
