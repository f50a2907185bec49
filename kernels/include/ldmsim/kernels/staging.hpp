// Staging: the control core's copy of a tensor into its DMA-legal (padded) layout in device memory, and
// back. Padding is zeros; stripping drops it. Host time spent is measured for the stats.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "ldmsim/kernels/padding.hpp"
#include "ldmsim/runtime/device_ptr.hpp"
#include "ldmsim/runtime/machine.hpp"
#include "ldmsim/sim/fp16.hpp"

namespace ldmsim {

/// A tensor living in device memory in a padded layout.
struct DeviceTensor {
  std::string name;
  DevicePtr<f16> ptr;
  PaddingPlan plan;
  /// False for a box of another tensor's buffer (a split producer's rows inside its consumer's buffer): the gaps of
  /// its layout belong to that buffer. The matrix engine and gather_parts then write its logical elements only; a
  /// kernel that writes its layout's whole extent (the depthwise conv) gets such a box only where whatever it puts
  /// in the gaps is written over afterwards (margin rows are gathered after their producer ran).
  bool owns_padding = true;
  const Layout& layout() const { return plan.layout; }
};

/// Host time and bytes of staging, accumulated.
struct StagingStats {
  double host_seconds = 0;
  std::uint64_t bytes_added = 0;   ///< padding bytes of every staged tensor (inputs and outputs)
  std::uint64_t bytes_staged = 0;  ///< bytes uploaded or downloaded, padding included
};

/// Copies logical (unpadded, C-order) elements into the padded layout, zeros elsewhere.
void pad_into(const Layout& layout, std::span<const f16> logical, std::span<f16> padded);
/// The padded copy of `logical`.
std::vector<f16> pad(const Layout& layout, std::span<const f16> logical);
/// The logical elements of a padded buffer.
std::vector<f16> strip(const Layout& layout, std::span<const f16> padded);

/// Allocates a device tensor for `plan` (zero-filled).
DeviceTensor allocate_tensor(Machine& machine, const std::string& name, const PaddingPlan& plan,
                             StagingStats* stats = nullptr);
/// Allocates, pads and uploads a tensor.
DeviceTensor stage_in(Machine& machine, const std::string& name, const PaddingPlan& plan, std::span<const f16> logical,
                      StagingStats* stats = nullptr);
/// stage_in of shared values: where the plan adds no padding the tensor's region is lent the values
/// (Machine::upload_shared) instead of a copy of them.
DeviceTensor stage_in(Machine& machine, const std::string& name, const PaddingPlan& plan, const SharedHalves& logical,
                      StagingStats* stats = nullptr);
/// Downloads a tensor and strips its padding.
std::vector<f16> stage_out(const Machine& machine, const DeviceTensor& tensor, StagingStats* stats = nullptr);

}  // namespace ldmsim
