// Private: the fused kernel's arguments and entry point (fused_kernel.cpp), launched by the fused op.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "fused_layout.hpp"
#include "ldmsim/kernels/fused_kernel.hpp"
#include "ldmsim/ldmsim.hpp"

namespace ldmsim::fusion {

/// The row index a value has for a frame row: the frame row's coordinates with the value's broadcast axes at 0.
/// Built per value once per launch (KernelArgs::index), read by every core.
class RowIndex {
 public:
  RowIndex(const FusionFrame& f, const FusedValue& v) {
    std::uint64_t stride = 1;
    for (std::size_t a = f.k_begin; a-- > 0;) {
      dims_[axes_] = f.shape[a];
      strides_[axes_] = v.dims[a] == 1 ? 0 : stride;
      ++axes_;
      stride *= v.dims[a];
    }
  }
  std::uint64_t operator()(std::uint64_t row) const {
    std::uint64_t index = 0;
    for (std::size_t a = 0; a < axes_; ++a) {
      index += row % dims_[a] * strides_[a];
      row /= dims_[a];
    }
    return index;
  }

 private:
  std::array<std::uint64_t, Shape::kMaxRank> dims_{}, strides_{};  // innermost row axis first
  std::size_t axes_ = 0;
};

/// Every value's RowIndex, in value order.
inline std::vector<RowIndex> row_indexes(const FusedProgram& p) {
  std::vector<RowIndex> out;
  out.reserve(p.values.size());
  for (const FusedValue& v : p.values) out.emplace_back(p.frame, v);
  return out;
}

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
  std::vector<RowIndex> index;  ///< row_indexes(*program): the same for every core
};

void fused_kernel(Core& core, const KernelArgs& args);

}  // namespace ldmsim::fusion
