// Rounding a model's constants to fp16 with finite values beyond fp16's range saturated (see fp16.hpp for the
// plain rounding).
#pragma once

#include <cstddef>

#include "ldmsim/sim/fp16.hpp"

namespace ldmsim {

/// float_bytes_to_halves for a model's constants: a finite value beyond fp16's range (|x| >= 65520, which rounds
/// to infinity) becomes +-65504, fp16's largest finite value, as fp16 conversion tools do (an attention mask's
/// -1e9 stays a large negative number, not -inf that a 0 multiplies into NaN); infinities and NaN stay. Returns
/// how many values were saturated.
std::size_t float_bytes_to_halves_saturated(const void* from, std::size_t count, void* to) noexcept;
/// One value as float_bytes_to_halves_saturated rounds it; counts a saturation into `saturated`.
f16 saturated_half(double value, std::size_t& saturated) noexcept;

}  // namespace ldmsim
