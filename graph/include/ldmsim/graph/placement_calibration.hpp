// The placement estimate's calibration (docs/splitting.md "The estimate"): per preset, factors that turn the
// roofline's terms into the cycles the simulated kernels take, fitted to simulated runs by
// bench/placement_calibrate.py. An arch without a fit is priced by the plain roofline.
#pragma once

#include <optional>
#include <string_view>

#include "ldmsim/graph/run_record.hpp"

namespace ldmsim {

/// The ops whose kernels share a cost structure: convs on the matrix engine with a window (whose tiles read each input
/// row once per kernel row, in row blocks) and 1x1 convs (contiguous runs of whole planes), grouped and depthwise
/// convs, fc/gemm/matmul on the matrix engine, fused kernels (docs/fusion.md), pools (windows whose reads overlap, and
/// global pools), concat (a copy), everything else, and element-wise ops (streamed tiles; also the activation after a
/// reduction tree's sum, whose levels are priced apart).
enum class CostClass {
  kConv,
  kPointwiseConv,
  kVectorConv,
  kMatrix,
  kAttention,
  kFused,
  kPool,
  kConcat,
  kElementwise,
  kOther
};

std::string_view to_string(CostClass c) noexcept;

/// Cycles per cycle of each roofline term of one class (a launch's fixed cost included).
struct TermFactors {
  double compute = 1, local = 1, remote = 1, launch = 1;
};

/// A preset's fit: each roofline term of a group's launch scaled by its class's factor, and an exchange's roofline
/// by one factor. fc/gemm/matmul and the attention kernels keep their own estimates unscaled (too few of them in the
/// benchmark networks to fit).
struct PlacementCalibration {
  TermFactors conv, pointwise_conv, vector_conv, fused, pool, concat, other, elementwise;
  double exchange = 1;
  /// A reduction tree level's remote partial crosses the link queued behind the level's local DMA: the share of the
  /// link's time that adds to the local DMA's (1: none of it hidden).
  double tree_link = 1;
  TermFactors of(CostClass c) const {
    switch (c) {
      case CostClass::kConv:
        return conv;
      case CostClass::kPointwiseConv:
        return pointwise_conv;
      case CostClass::kVectorConv:
        return vector_conv;
      case CostClass::kFused:
        return fused;
      case CostClass::kPool:
        return pool;
      case CostClass::kConcat:
        return concat;
      case CostClass::kOther:
        return other;
      case CostClass::kElementwise:
        return elementwise;
      case CostClass::kMatrix:
      case CostClass::kAttention:
        break;
    }
    return {};
  }
};

/// The fit for the preset named `arch_name`; nullopt for any other arch.
std::optional<PlacementCalibration> placement_calibration(std::string_view arch_name);

}  // namespace ldmsim
