// IEEE 754 binary16 storage type with round-to-nearest-even conversions. Uses F16C when the CPU has it
// (chosen at run time) and a portable bit-exact fallback otherwise; both give identical bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace ldmsim {

/// Converts a float to binary16 bits, rounding to nearest even (portable implementation).
std::uint16_t float_to_half_bits_portable(float value) noexcept;
/// Converts binary16 bits to a float exactly (portable implementation).
float half_bits_to_float_portable(std::uint16_t bits) noexcept;
/// Converts a float to binary16 bits, rounding to nearest even (fastest available implementation).
std::uint16_t float_to_half_bits(float value) noexcept;
/// Converts binary16 bits to a float exactly (fastest available implementation).
float half_bits_to_float(std::uint16_t bits) noexcept;
/// True when the F16C instructions are used.
bool f16c_available() noexcept;

/// A 2-byte IEEE half. Trivially copyable; arithmetic happens in float.
struct f16 {
  std::uint16_t bits = 0;

  f16() = default;
  explicit f16(float value) noexcept : bits(float_to_half_bits(value)) {}
  explicit operator float() const noexcept { return half_bits_to_float(bits); }
  static f16 from_bits(std::uint16_t b) noexcept {
    f16 h;
    h.bits = b;
    return h;
  }
  friend bool operator==(f16 a, f16 b) noexcept = default;
};
static_assert(sizeof(f16) == 2);

/// Bulk conversions (vectorised with F16C when available). Spans must have equal sizes.
void floats_to_halves(std::span<const float> in, std::span<f16> out) noexcept;
void halves_to_floats(std::span<const f16> in, std::span<float> out) noexcept;
/// Rounds `count` fp32 values stored at `from` (any alignment: a model file's raw bytes) to fp16 at `to` (any
/// alignment). `to` may be `from`: each value is read before its half is written, and no half lands on a value
/// not read yet.
void float_bytes_to_halves(const void* from, std::size_t count, void* to) noexcept;

/// Immutable fp16 values shared by their holders (a graph and its copies, an import's arrays), in whatever storage
/// made them: a vector, or a model's own buffer they were converted in place in. Copies share; none copies values.
class SharedHalves {
 public:
  SharedHalves() = default;
  /// Takes the vector's values.
  explicit SharedHalves(std::vector<f16> values);
  /// `size` values at `data`, kept alive by `owner`.
  SharedHalves(std::shared_ptr<const void> owner, const f16* data, std::size_t size)
      : data_(std::move(owner), data), size_(size) {}
  SharedHalves(const SharedHalves&) = default;
  SharedHalves& operator=(const SharedHalves&) = default;
  /// A moved-from SharedHalves is empty.
  SharedHalves(SharedHalves&& other) noexcept : data_(std::move(other.data_)), size_(std::exchange(other.size_, 0)) {}
  SharedHalves& operator=(SharedHalves&& other) noexcept {
    data_ = std::move(other.data_);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }
  ~SharedHalves() = default;
  const f16* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::span<const f16> span() const { return {data_.get(), size_}; }
  std::vector<f16> to_vector() const { return {data_.get(), data_.get() + size_}; }
  /// The values, sharing ownership of whatever keeps them alive.
  const std::shared_ptr<const f16>& shared() const { return data_; }

 private:
  std::shared_ptr<const f16> data_;
  std::size_t size_ = 0;
};

}  // namespace ldmsim
