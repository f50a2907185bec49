// The presets' fits of the placement estimate (placement_calibration.hpp). Each row is what
// bench/placement_calibrate.py prints for that preset: a non-negative least-squares fit of the simulated cycles of
// every op of the benchmark networks' `--split auto` runs to the roofline terms of the placement they ran.
#include "ldmsim/graph/placement_calibration.hpp"

namespace ldmsim {

std::string_view to_string(CostClass c) noexcept {
  switch (c) {
    case CostClass::kConv:
      return "conv";
    case CostClass::kPointwiseConv:
      return "conv-1x1";
    case CostClass::kVectorConv:
      return "vector-conv";
    case CostClass::kMatrix:
      return "matrix";
    case CostClass::kAttention:
      return "attention";
    case CostClass::kFused:
      return "fused";
    case CostClass::kPool:
      return "pool";
    case CostClass::kConcat:
      return "concat";
    case CostClass::kElementwise:
      return "elementwise";
    case CostClass::kOther:
      break;
  }
  return "other";
}

std::optional<PlacementCalibration> placement_calibration(std::string_view arch_name) {
  // {compute, local, remote, launch} for conv, conv-1x1, vector-conv, fused, pool, concat, other and elementwise; then
  // the exchange factor and the share of a reduction tree level's link time not hidden behind its local DMA
  // (measured on the levels of ResNet-50, MobileNet-V2 and EfficientNet-B0's `conv-c` runs, docs/splitting.md).
  if (arch_name == "sw26010")
    return PlacementCalibration{
        {1.16, 5.17, 2.36, 10.8},
        {1.26, 4.42, 1.36, 0.469},
        {2, 1.07, 0.832, 6.72},
        {11.7, 1.53, 1.19, 1.65},
        {1, 0.951, 0.841, 3.4},
        {4, 1.57, 1.07, 0.00509},
        {1.01, 2.76, 1.42, 0.964},
        {4, 1.01, 0.306, 0.808},
        1.16,
        0.5,
    };
  if (arch_name == "sw26010pro")
    return PlacementCalibration{
        {1.15, 2.87, 1.17, 5.4},
        {1.07, 3.84, 1.14, 1.84},
        {4, 1.26, 0.152, 12.7},
        {10.1, 2.06, 1.03e-12, 3.59},
        {4, 1.09, 0.764, 7.66},
        {1, 1.67, 1, 5.07},
        {5.46, 2.05, 1.34, 5.99},
        {4, 0.942, 1.01, 1.68},
        1.38,
        1,
    };
  return std::nullopt;
}

}  // namespace ldmsim
