// What the graph passes and the front ends know of an operator, kept with the operator: its kind's traits (how the
// split rule cuts it, its part in the fusion pass's store folds, the ONNX op types that map onto it one to one) and
// its bound instance's split geometry (the window, transposes and axis it parsed from its attributes). Adding an op
// is then one file and its test (docs/architecture.md "Adding an operator").
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ldmsim {

/// Which of the split rule's families cuts an op (docs/splitting.md); kNone: it runs whole.
enum class SplitRule : std::uint8_t {
  kNone,
  kElementwise,  ///< any dimension of the output, inputs of the same extent cut alike, broadcast ones whole
  kConv,         ///< n, output rows, output columns (a halo of input rows), output channels
  kMatrix,       ///< fc, gemm, matmul: rows, the inner dimension (partial sums), columns
  kPool,         ///< n, c, and output rows and columns when the pool pads nothing
  kConcat,       ///< any axis but its own
  kSpatialBn,    ///< n, h, w
};

/// An op's part in the fusion pass's folds into a producer's store (docs/fusion.md § Folds into the store).
enum class StoreFoldRole : std::uint8_t {
  kNone,
  kActivation,   ///< folds as the producer's attribute "activation" (relu, clip)
  kResidualAdd,  ///< folds as the producer's attribute "residual" (add)
};

/// What an operator kind tells the passes and front ends about itself.
struct OperatorTraits {
  SplitRule split = SplitRule::kNone;
  StoreFoldRole store_fold = StoreFoldRole::kNone;
  /// ONNX op types translated one to one onto this kind: the node's inputs in order, no attributes (docs/onnx.md).
  std::vector<std::string> onnx_types;
};

/// What the split rule reads of a bound op: the attributes it parsed, never the raw JSON again.
struct SplitGeometry {
  /// Window ops (conv, pools): a window slides over h (0) and w (1) with this geometry.
  bool window = false;
  std::array<std::uint64_t, 2> kernel{1, 1}, stride{1, 1}, dilation{1, 1}, pad_before{0, 0}, pad_after{0, 0};
  std::uint64_t groups = 1;  ///< conv
  bool residual = false;     ///< conv: its last input is a residual added as it stores
  /// Matrix ops: A is read transposed (gemm's transA), or holds a batch of matrices (matmul beyond 2-D): no split.
  bool trans_a = false;
  bool batched = false;
  bool trans_b = false;     ///< B holds one output column per row, [N, K] (fc's W, gemm's transB)
  bool flattens_a = false;  ///< A is X [n, ...] read as [n, c*h*w] (fc)
  std::size_t axis = 0;     ///< concat: the axis it joins along (non-negative)
  bool pads_nothing() const { return pad_before == std::array<std::uint64_t, 2>{} && pad_after == pad_before; }
};

}  // namespace ldmsim
