// The padding planner: the method's 1-D / add-a-row / add-a-column / 3-D plans, the naive baseline, and the
// choice of the cheapest legal plan. Pure functions; no machine involved.
#include "ldmsim/kernels/padding.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ldmsim/sim/enum_names.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

namespace {

std::size_t even_up(std::size_t v) {
  return v + (v % 2);
}

std::size_t unit_size(const Shape4& s, Unit u) {
  switch (u) {
    case Unit::kSample:
      return s.chw();
    case Unit::kPlane:
      return s.hw();
    case Unit::kRow:
      return s.w;
  }
  return s.chw();
}

std::size_t unit_count(const Shape4& s, Unit u) {
  return s.elements() / std::max<std::size_t>(unit_size(s, u), 1);
}

PaddingPlan make(PlanKind kind, Layout layout) {
  return PaddingPlan{kind, layout};
}

}  // namespace

std::vector<std::size_t> Shape4::dims() const {
  const std::size_t all[4] = {n, c, h, w};
  return {all, all + rank};
}

Shape4 Shape4::from_dims(const std::vector<std::size_t>& dims) {
  if (dims.empty() || dims.size() > 4) {
    throw ConfigError(fmt::format("a shape has 1 to 4 dimensions, got {}", dims.size()));
  }
  Shape4 s;
  s.rank = static_cast<int>(dims.size());
  std::size_t* slots[4] = {&s.n, &s.c, &s.h, &s.w};
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) throw ConfigError(fmt::format("dimension {} of a shape is 0", i));
    *slots[i] = dims[i];
  }
  return s;
}

Shape4 Shape4::view_of(const Shape& shape) {
  if (shape.rank() == 0) return from_dims({1});
  if (shape.rank() <= 4) return from_dims(shape.dims_vector());
  const std::size_t lead = shape.rank() - 3;
  return from_dims({shape.product(0, lead), shape[lead], shape[lead + 1], shape[lead + 2]});
}

Shape4 Shape4::matrix_view(const Shape& shape, std::size_t axis) {
  return from_dims({shape.product(0, axis), shape.product(axis, shape.rank())});
}

std::string Shape4::str() const {
  return fmt::format("{}", fmt::join(dims(), "x"));
}

Layout Layout::natural(const Shape4& shape) {
  Layout l;
  l.shape = shape;
  l.w_pitch = shape.w;
  l.hw_pitch = shape.hw();
  l.chw_pitch = shape.chw();
  l.total = shape.elements();
  return l;
}

namespace {

// The placement of a layout as (extent, pitch) pairs from the innermost dimension out, with unit extents dropped
// and dimensions merged where the outer pitch continues the inner one: equal lists place elements identically.
std::vector<std::pair<std::size_t, std::size_t>> placement(const Layout& l) {
  const std::size_t extents[4] = {l.shape.w, l.shape.h, l.shape.c, l.shape.n};
  const std::size_t pitches[4] = {1, l.w_pitch, l.hw_pitch, l.chw_pitch};
  std::vector<std::pair<std::size_t, std::size_t>> dims;
  for (int i = 0; i < 4; ++i) {
    if (extents[i] == 1) continue;
    if (!dims.empty() && dims.back().first * dims.back().second == pitches[i]) {
      dims.back().first *= extents[i];
    } else {
      dims.emplace_back(extents[i], pitches[i]);
    }
  }
  return dims;
}

}  // namespace

bool Layout::same_placement(const Layout& other) const {
  return total == other.total && shape.elements() == other.shape.elements() && placement(*this) == placement(other);
}

std::size_t Layout::offset_of(std::size_t logical) const {
  const std::size_t w = logical % shape.w, rest = logical / shape.w;
  const std::size_t h = rest % shape.h, rest2 = rest / shape.h;
  return offset(rest2 / shape.c, rest2 % shape.c, h, w);
}

std::size_t Layout::logical_at_or_after(std::size_t off) const {
  std::size_t n = off / chw_pitch, r = off % chw_pitch;
  if (n >= shape.n) return shape.elements();
  std::size_t c = r / hw_pitch, r2 = r % hw_pitch;
  std::size_t h = r2 / w_pitch, w = r2 % w_pitch;
  // Past the logical part of a row, plane or sample: move to the start of the next one.
  if (c >= shape.c) return (n + 1) * shape.chw();
  if (h >= shape.h) return n * shape.chw() + (c + 1) * shape.hw();
  if (w >= shape.w) return n * shape.chw() + c * shape.hw() + (h + 1) * shape.w;
  return n * shape.chw() + c * shape.hw() + h * shape.w + w;
}

constexpr auto kStagingPolicyNames = enum_names<StagingPolicy>({
    {StagingPolicy::kMethod, "method"},
    {StagingPolicy::kNaive, "naive"},
    {StagingPolicy::kNone, "none"},
});

std::string_view to_string(StagingPolicy policy) noexcept {
  return kStagingPolicyNames.name(policy, "method");
}

StagingPolicy parse_staging_policy(std::string_view name) {
  if (const auto policy = kStagingPolicyNames.parse(name)) return *policy;
  throw ConfigError(
      fmt::format("unknown staging policy '{}' (expected {})", name, kStagingPolicyNames.list(", ", " or ")));
}

constexpr auto kPlanKindNames = enum_names<PlanKind>({
    {PlanKind::kNone, "none-needed"},
    {PlanKind::kOneD, "1-D"},
    {PlanKind::kRow, "add-a-row"},
    {PlanKind::kColumn, "add-a-column"},
    {PlanKind::kThreeD, "3-D"},
    {PlanKind::kNaive, "naive"},
    {PlanKind::kUnpadded, "unpadded"},
});

std::string_view to_string(PlanKind kind) noexcept {
  return kPlanKindNames.name(kind);
}

std::string PaddingPlan::describe() const {
  const double pct = layout.shape.elements() == 0
                         ? 0.0
                         : 100.0 * static_cast<double>(added_elements()) / static_cast<double>(layout.shape.elements());
  return fmt::format("{:<12} pitches w={} hw={} chw={} total={} elements, +{} elements (+{} bytes, {:.3f}%)",
                     to_string(kind), layout.w_pitch, layout.hw_pitch, layout.chw_pitch, layout.total, added_elements(),
                     added_bytes(), pct);
}

PaddingPlan plan_one_d(const Shape4& shape) {
  Layout l = Layout::natural(shape);
  if (l.total % 2 == 0) return make(PlanKind::kNone, l);
  l.total += 1;
  return make(PlanKind::kOneD, l);
}

PaddingPlan plan_row(const Shape4& shape, Unit unit) {
  Layout l = Layout::natural(shape);
  const std::size_t size = unit_size(shape, unit);
  const std::size_t count = unit_count(shape, unit);
  if (size % 2 == 0 || count % 2 == 0) return make(PlanKind::kNone, l);
  l.total = (count + 1) * size;
  return make(PlanKind::kRow, l);
}

PaddingPlan plan_column(const Shape4& shape, Unit unit) {
  Layout l = Layout::natural(shape);
  if (unit_size(shape, unit) % 2 == 0) return make(PlanKind::kNone, l);
  switch (unit) {
    case Unit::kSample:
      l.chw_pitch = shape.chw() + 1;
      break;
    case Unit::kPlane:
      l.hw_pitch = shape.hw() + 1;
      l.chw_pitch = shape.c * l.hw_pitch;
      break;
    case Unit::kRow:
      l.w_pitch = shape.w + 1;
      l.hw_pitch = shape.h * l.w_pitch;
      l.chw_pitch = shape.c * l.hw_pitch;
      break;
  }
  l.total = shape.n * l.chw_pitch;
  return make(PlanKind::kColumn, l);
}

PaddingPlan plan_three_d(const Shape4& shape) {
  Layout l = Layout::natural(shape);
  if (shape.hw() % 2 == 0 && shape.c % 2 == 0) return make(PlanKind::kNone, l);
  l.hw_pitch = even_up(shape.hw());
  l.chw_pitch = even_up(shape.c) * l.hw_pitch;
  l.total = shape.n * l.chw_pitch;
  return make(PlanKind::kThreeD, l);
}

PaddingPlan plan_naive(const Shape4& shape) {
  Layout l = Layout::natural(shape);
  const int r = shape.rank;
  const std::size_t n = r >= 1 ? even_up(shape.n) : shape.n;
  const std::size_t c = r >= 2 ? even_up(shape.c) : shape.c;
  const std::size_t h = r >= 3 ? even_up(shape.h) : shape.h;
  const std::size_t w = r >= 4 ? even_up(shape.w) : shape.w;
  l.w_pitch = w;
  l.hw_pitch = h * w;
  l.chw_pitch = c * h * w;
  l.total = n * l.chw_pitch;
  return make(l.total == shape.elements() ? PlanKind::kNone : PlanKind::kNaive, l);
}

bool natural_is_legal(const Shape4& shape, const PaddingSpec& spec) {
  switch (spec.cls) {
    case PaddingClass::kOneD:
      return shape.elements() % 2 == 0;
    case PaddingClass::kTwoD:
      return unit_size(shape, spec.row_unit) % 2 == 0 || unit_count(shape, spec.row_unit) % 2 == 0;
    case PaddingClass::kThreeD:
      return shape.hw() % 2 == 0;
  }
  return false;
}

PaddingPlan plan_unpadded(const Shape4& shape, const PaddingSpec& spec) {
  return make(natural_is_legal(shape, spec) ? PlanKind::kNone : PlanKind::kUnpadded, Layout::natural(shape));
}

std::vector<PaddingPlan> method_candidates(const Shape4& shape, const PaddingSpec& spec) {
  if (spec.cls == PaddingClass::kTwoD && spec.even_rows && unit_size(shape, spec.column_unit) % 2 != 0) {
    return {plan_column(shape, spec.column_unit)};
  }
  if (natural_is_legal(shape, spec)) return {make(PlanKind::kNone, Layout::natural(shape))};
  switch (spec.cls) {
    case PaddingClass::kOneD:
      return {plan_one_d(shape)};
    case PaddingClass::kTwoD:
      return {plan_row(shape, spec.row_unit), plan_column(shape, spec.column_unit)};
    case PaddingClass::kThreeD:
      return {plan_three_d(shape), plan_column(shape, Unit::kPlane)};
  }
  return {};
}

PaddingPlan choose_plan(const Shape4& shape, const PaddingSpec& spec, StagingPolicy policy) {
  if (policy == StagingPolicy::kNone) return plan_unpadded(shape, spec);
  if (policy == StagingPolicy::kNaive) return plan_naive(shape);
  const auto candidates = method_candidates(shape, spec);
  return *std::min_element(candidates.begin(), candidates.end(), [](const PaddingPlan& a, const PaddingPlan& b) {
    return a.added_elements() < b.added_elements();
  });
}

}  // namespace ldmsim
