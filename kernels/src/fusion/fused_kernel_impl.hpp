// Private: the fused kernel's arguments and entry point (fused_kernel.cpp), launched by the fused op.
#pragma once

#include <vector>

#include "fused_layout.hpp"
#include "ldmsim/kernels/fused_kernel.hpp"
#include "ldmsim/ldmsim.hpp"

namespace ldmsim::fusion {

struct KernelArgs {
  const FusedProgram* program = nullptr;
  const FusedMapping* mapping = nullptr;
  const SlotPlan* slots = nullptr;  ///< the program's ldm slots under the mapping (planned once per op)
  std::vector<DevicePtr<const f16>> in;
  std::vector<Layout> in_layout;
  std::vector<DevicePtr<f16>> out;
  std::vector<Layout> out_layout;
  /// Per core group: the teams' partials, [team slot][parity][step][member][I] floats (team > 1 only).
  std::vector<DevicePtr<float>> scratch;
};

void fused_kernel(Core& core, const KernelArgs& args);

}  // namespace ldmsim::fusion
