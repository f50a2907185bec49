// Logical tensor shapes of rank 0 to 6 with checked arithmetic, and numpy broadcasting. Every size computed from
// user input goes through checked_mul/checked_add, so an impossible shape is a ConfigError naming the culprit,
// never a wrapped count.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ldmsim {

/// Largest element count (and byte count) any tensor may have: 2^48, far above any simulated memory.
inline constexpr std::uint64_t kMaxTensorElements = std::uint64_t{1} << 48;

/// a * b, or ConfigError "WHAT: a x b overflows" when the product exceeds kMaxTensorElements.
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::string_view what);
/// a + b, or ConfigError when the sum exceeds kMaxTensorElements.
std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, std::string_view what);

/// A shape of rank 0 (a scalar) to 6; every dimension >= 1; the element count fits kMaxTensorElements.
class Shape {
 public:
  static constexpr std::size_t kMaxRank = 6;

  Shape() = default;  ///< a scalar
  /// ConfigError naming `what` for a rank above 6, a zero dimension or an element count that overflows.
  explicit Shape(std::span<const std::uint64_t> dims, std::string_view what = "shape");
  Shape(std::initializer_list<std::uint64_t> dims) : Shape(std::span<const std::uint64_t>(dims.begin(), dims.size())) {}

  std::size_t rank() const { return rank_; }
  std::uint64_t operator[](std::size_t axis) const { return dims_[axis]; }
  std::span<const std::uint64_t> dims() const { return {dims_.data(), rank_}; }
  std::vector<std::size_t> dims_vector() const { return {dims_.begin(), dims_.begin() + rank_}; }
  std::uint64_t elements() const { return elements_; }
  /// Product of dims [from, to).
  std::uint64_t product(std::size_t from, std::size_t to) const;
  /// "[2, 3, 5]" ("[]" for a scalar).
  std::string str() const;
  friend bool operator==(const Shape& a, const Shape& b) {
    return a.rank_ == b.rank_ && std::equal(a.dims_.begin(), a.dims_.begin() + a.rank_, b.dims_.begin());
  }

 private:
  std::array<std::uint64_t, kMaxRank> dims_{};
  std::size_t rank_ = 0;
  std::uint64_t elements_ = 1;
};

/// The numpy broadcast of two shapes (ConfigError naming both when a pair of dims is neither equal nor 1).
Shape broadcast_shapes(const Shape& a, const Shape& b);
/// Strides (in elements) for reading `input` as if it had `output`'s shape: 0 on broadcast axes; output's rank.
std::array<std::uint64_t, Shape::kMaxRank> broadcast_strides(const Shape& input, const Shape& output);

}  // namespace ldmsim
