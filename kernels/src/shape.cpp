// Shapes, checked size arithmetic and numpy broadcasting (see shape.hpp).
#include "ldmsim/kernels/shape.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::string_view what) {
  if (a != 0 && b > kMaxTensorElements / a) {
    throw ConfigError(fmt::format("{}: {} x {} is larger than 2^48, beyond any simulated machine", what, a, b));
  }
  return a * b;
}

std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, std::string_view what) {
  if (a > kMaxTensorElements || b > kMaxTensorElements - a) {
    throw ConfigError(fmt::format("{}: {} + {} is larger than 2^48, beyond any simulated machine", what, a, b));
  }
  return a + b;
}

Shape::Shape(std::span<const std::uint64_t> dims, std::string_view what) {
  if (dims.size() > kMaxRank) {
    throw ConfigError(fmt::format("{}: rank {} is above the supported maximum of {}", what, dims.size(), kMaxRank));
  }
  rank_ = dims.size();
  for (std::size_t i = 0; i < rank_; ++i) {
    if (dims[i] == 0) throw ConfigError(fmt::format("{}: dimension {} is 0 (every dimension must be >= 1)", what, i));
    dims_[i] = dims[i];
    elements_ = checked_mul(elements_, dims[i], fmt::format("{} {}", what, fmt::join(dims, "x")));
  }
}

std::uint64_t Shape::product(std::size_t from, std::size_t to) const {
  std::uint64_t p = 1;
  for (std::size_t i = from; i < to && i < rank_; ++i) p *= dims_[i];
  return p;
}

std::string Shape::str() const {
  return fmt::format("[{}]", fmt::join(dims(), ", "));
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.rank(), b.rank());
  std::vector<std::uint64_t> out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::uint64_t da = i < rank - a.rank() ? 1 : a[i - (rank - a.rank())];
    const std::uint64_t db = i < rank - b.rank() ? 1 : b[i - (rank - b.rank())];
    if (da != db && da != 1 && db != 1) {
      throw ConfigError(
          fmt::format("shapes {} and {} do not broadcast (axis {}: {} vs {})", a.str(), b.str(), i, da, db));
    }
    out[i] = std::max(da, db);
  }
  return Shape(out);
}

std::array<std::uint64_t, Shape::kMaxRank> broadcast_strides(const Shape& input, const Shape& output) {
  std::array<std::uint64_t, Shape::kMaxRank> strides{};
  const std::size_t offset = output.rank() - input.rank();
  std::uint64_t stride = 1;
  for (std::size_t i = input.rank(); i-- > 0;) {
    strides[i + offset] = input[i] == 1 ? 0 : stride;
    stride *= input[i];
  }
  return strides;
}

}  // namespace ldmsim
