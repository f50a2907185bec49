// The fused kernel's device code: each core runs its share of the program (fused_core.hpp).
#include "fused_core.hpp"

namespace ldmsim::fusion {

void fused_kernel(Core& core, const KernelArgs& args) {
  FusedCore(core, args).run();
}

}  // namespace ldmsim::fusion
