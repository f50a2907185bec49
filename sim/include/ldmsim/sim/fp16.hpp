// IEEE 754 binary16 storage type with round-to-nearest-even conversions. Uses F16C when the CPU has it
// (chosen at run time) and a portable bit-exact fallback otherwise; both give identical bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

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

}  // namespace ldmsim
