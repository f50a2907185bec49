// Element types of device tensors. fp16 is the compute type; int32 and bool tensors exist where an op needs them
// (token ids, gather indices, masks). Both are held as 32-bit little-endian words (bool: 0 or 1), so every element
// is a DMA-legal 4-byte unit and such a tensor never needs padding. Device memory, layouts and host buffers count
// in 2-byte units (an fp16 element is one unit, a word two), which is how typed values travel in a SharedHalves.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ldmsim/kernels/padding.hpp"
#include "ldmsim/kernels/shape.hpp"
#include "ldmsim/sim/fp16.hpp"

namespace ldmsim {

enum class DType : std::uint8_t { kF16, kI32, kBool };

/// "f16" | "int32" | "bool".
std::string_view to_string(DType type) noexcept;
/// Parses a dtype name as to_string writes it (ConfigError naming the valid ones).
DType parse_dtype(std::string_view name);

/// 2-byte units per element: 1 for fp16, 2 for the 32-bit types.
constexpr std::size_t units_of(DType type) noexcept {
  return type == DType::kF16 ? 1 : 2;
}
/// Bytes per element on the device.
constexpr std::size_t bytes_of(DType type) noexcept {
  return units_of(type) * 2;
}

/// The 4-D view of a tensor of `shape` in 2-byte units: Shape4::view_of for fp16; for a 32-bit type the same with
/// w doubled (a word's two units are innermost, so C order is kept).
Shape4 unit_view(const Shape& shape, DType type);
/// The layout a tensor of `type` is held in: fp16 as `fp16_plan` says; a 32-bit type in its natural layout (every
/// element is already a 4-byte unit).
PaddingPlan typed_plan(const Shape& shape, DType type, const PaddingPlan& fp16_plan);

/// 32-bit words as 2-byte units (little-endian: the low half first).
std::vector<f16> words_to_units(std::span<const std::int32_t> words);
/// Units back to words (an even count).
std::vector<std::int32_t> units_to_words(std::span<const f16> units);
/// The value of element `i` of a buffer of `type` in units, as a double (fp16 widened, int32 exact, bool 0/1).
double element_value(std::span<const f16> units, DType type, std::size_t i);
/// Every element of a buffer of `type` as float (the fp32 references' view; int32 exact below 2^24).
std::vector<float> elements_as_floats(std::span<const f16> units, DType type);
/// Float values (references, tests) held as `type`: fp16 rounded to nearest even, int32 truncated toward zero,
/// bool nonzero.
std::vector<f16> floats_to_units(std::span<const float> values, DType type);

}  // namespace ldmsim
