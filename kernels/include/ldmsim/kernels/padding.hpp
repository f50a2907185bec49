// The padding method: per-operator alignment padding of fp16 tensors at staging. Pure functions that turn the
// 4-D NCHW view of a tensor and an operator's padding class into a padded layout (pitches and total size), plus
// the naive per-dimension baseline. See docs/operators.md for the plans of each operator.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ldmsim/kernels/shape.hpp"

namespace ldmsim {

/// The 4-D NCHW view a kernel takes of a tensor: rank 1..4 shapes with trailing dimensions of 1 ([k] -> k,1,1,1);
/// `rank` is the view's own rank (the naive plan pads that many dimensions).
struct Shape4 {
  std::size_t n = 1, c = 1, h = 1, w = 1;
  int rank = 4;

  std::size_t hw() const { return h * w; }
  std::size_t chw() const { return c * h * w; }
  std::size_t elements() const { return n * c * h * w; }
  /// The dimensions as a vector of `rank` values.
  std::vector<std::size_t> dims() const;
  /// Builds a shape from 1..4 dimensions (ConfigError otherwise).
  static Shape4 from_dims(const std::vector<std::size_t>& dims);
  /// The NCHW view of a shape of any rank: a scalar is [1]; ranks 5 and 6 fold their leading dimensions into n.
  static Shape4 view_of(const Shape& shape);
  /// The 2-D view [rows, columns] of a shape split at `axis` (rows = product of the dims before it).
  static Shape4 matrix_view(const Shape& shape, std::size_t axis);
  /// "n x c x h x w" (only the first `rank` dims).
  std::string str() const;
  friend bool operator==(const Shape4&, const Shape4&) = default;
};

/// A padded layout in fp16 elements: element (n,c,h,w) lives at n*chw_pitch + c*hw_pitch + h*w_pitch + w.
struct Layout {
  Shape4 shape;
  std::size_t w_pitch = 1;    ///< elements per h row
  std::size_t hw_pitch = 1;   ///< elements per channel plane
  std::size_t chw_pitch = 1;  ///< elements per sample
  std::size_t total = 0;      ///< elements allocated (tail zeros included)

  std::size_t offset(std::size_t n, std::size_t c, std::size_t h, std::size_t w) const {
    return n * chw_pitch + c * hw_pitch + h * w_pitch + w;
  }
  /// Elements added by padding.
  std::size_t added() const { return total - shape.elements(); }
  /// True when nothing was added and the pitches are the natural ones.
  bool is_natural() const { return added() == 0 && chw_pitch == shape.chw() && hw_pitch == shape.hw(); }
  /// True when padding (if any) is only at the end: the logical element i is at offset i.
  bool only_tail_padded() const { return w_pitch == shape.w && hw_pitch == shape.hw() && chw_pitch == shape.chw(); }
  /// The unpadded layout of a shape.
  static Layout natural(const Shape4& shape);
  friend bool operator==(const Layout&, const Layout&) = default;
  /// True when both place every logical element (in C order) at the same offset and allocate the same total,
  /// whatever 4-D view each was planned on: one buffer serves both without a copy.
  bool same_placement(const Layout& other) const;
  /// Offset of the logical element with C-order index `logical`.
  std::size_t offset_of(std::size_t logical) const;
  /// The C-order index of the first logical element stored at or after `offset` (elements() when none).
  std::size_t logical_at_or_after(std::size_t offset) const;
};

/// Calls fn(logical, offset, length) for every run of logical elements [first, last) that is contiguous in the
/// layout, in order. Runs are as long as the layout allows: a w row when rows are padded, a plane when only
/// planes are, a sample when only samples are, else everything.
template <typename F>
void for_each_run(const Layout& l, std::size_t first, std::size_t last, F&& fn) {
  const Shape4& s = l.shape;
  const std::size_t block = l.w_pitch != s.w         ? s.w
                            : l.hw_pitch != s.hw()   ? s.hw()
                            : l.chw_pitch != s.chw() ? s.chw()
                                                     : std::max<std::size_t>(s.elements(), 1);
  std::size_t logical = first;
  while (logical < last) {
    const std::size_t len = std::min(block - logical % block, last - logical);
    fn(logical, l.offset_of(logical), len);
    logical += len;
  }
}

/// How staging pads tensors: the padding method (default), the naive baseline, or not at all.
enum class StagingPolicy : std::uint8_t { kMethod, kNaive, kNone };
/// "method" | "naive" | "none".
std::string_view to_string(StagingPolicy policy) noexcept;
/// Parses a policy name (ConfigError names the valid ones).
StagingPolicy parse_staging_policy(std::string_view name);

/// The dimensionality an operator's computation really has on one tensor.
enum class PaddingClass : std::uint8_t { kOneD, kTwoD, kThreeD };
/// The unit a 2-D tensor is a matrix of: rows are samples (c*h*w), channel planes (h*w) or w rows.
enum class Unit : std::uint8_t { kSample, kPlane, kRow };

/// An operator's padding needs for one of its tensors.
struct PaddingSpec {
  PaddingClass cls = PaddingClass::kOneD;
  Unit row_unit = Unit::kSample;     ///< 2-D: the row of the add-a-row plan (kernels move rows in pairs)
  Unit column_unit = Unit::kSample;  ///< 2-D: one zero is appended after every such unit
  /// 2-D under the method: an odd unit always gets the add-a-column plan, even when rows in pairs would do
  /// (the matrix multiply engine's outputs: an even row pitch lets column blocks split a row among cores).
  bool even_rows = false;
};

/// The kinds of plan; kNone means the natural layout already obeys the 4-byte rule.
enum class PlanKind : std::uint8_t { kNone, kOneD, kRow, kColumn, kThreeD, kNaive, kUnpadded };
std::string_view to_string(PlanKind kind) noexcept;

/// A chosen padded layout and how it was obtained.
struct PaddingPlan {
  PlanKind kind = PlanKind::kNone;
  Layout layout;
  std::size_t added_elements() const { return layout.added(); }
  std::size_t added_bytes() const { return layout.added() * 2; }
  /// One line: kind, layout and overhead.
  std::string describe() const;
};

/// 1-D: one zero at the end when n*c*h*w is odd.
PaddingPlan plan_one_d(const Shape4& shape);
/// Add-a-row: rows of `unit` move in pairs; when the row is odd and the row count odd, one zero row at the end.
PaddingPlan plan_row(const Shape4& shape, Unit unit);
/// Add-a-column: one zero after every `unit` when the unit has an odd element count.
PaddingPlan plan_column(const Shape4& shape, Unit unit);
/// 3-D: h*w made even as the column case, c made even by h*w-pitch zeros after every c*h*w.
PaddingPlan plan_three_d(const Shape4& shape);
/// Naive baseline: every dimension of the tensor's rank made even.
PaddingPlan plan_naive(const Shape4& shape);
/// No padding at all (kNone when legal for `spec`, kUnpadded otherwise).
PaddingPlan plan_unpadded(const Shape4& shape, const PaddingSpec& spec);
/// True when the natural layout already satisfies the kernels of `spec`.
bool natural_is_legal(const Shape4& shape, const PaddingSpec& spec);
/// Every legal plan of the method for this class and shape (first = no padding when legal).
std::vector<PaddingPlan> method_candidates(const Shape4& shape, const PaddingSpec& spec);
/// The plan staging uses under `policy`: the cheapest method candidate, the naive plan, or no padding.
PaddingPlan choose_plan(const Shape4& shape, const PaddingSpec& spec, StagingPolicy policy);

}  // namespace ldmsim
