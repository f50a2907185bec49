#include "ldmsim/kernels/dtype.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ldmsim/sim/enum_names.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

namespace {

constexpr auto kDTypeNames = enum_names<DType>({
    {DType::kF16, "f16"},
    {DType::kI32, "int32"},
    {DType::kBool, "bool"},
});

std::int32_t word_at(std::span<const f16> units, std::size_t i) {
  const auto lo = static_cast<std::uint32_t>(units[2 * i].bits);
  const auto hi = static_cast<std::uint32_t>(units[2 * i + 1].bits);
  const std::uint32_t u = lo | (hi << 16);
  std::int32_t w = 0;
  std::memcpy(&w, &u, sizeof w);
  return w;
}

}  // namespace

std::string_view to_string(DType type) noexcept {
  return kDTypeNames.name(type, "f16");
}

DType parse_dtype(std::string_view name) {
  if (const auto type = kDTypeNames.parse(name)) return *type;
  throw ConfigError(fmt::format("unknown element type '{}' (expected {})", name, kDTypeNames.list(", ", " or ")));
}

Shape4 unit_view(const Shape& shape, DType type) {
  Shape4 v = Shape4::view_of(shape);
  if (units_of(type) == 1) return v;
  v.w *= units_of(type);
  v.rank = 4;
  return v;
}

PaddingPlan typed_plan(const Shape& shape, DType type, const PaddingPlan& fp16_plan) {
  if (type == DType::kF16) return fp16_plan;
  return PaddingPlan{PlanKind::kNone, Layout::natural(unit_view(shape, type))};
}

std::vector<f16> words_to_units(std::span<const std::int32_t> words) {
  std::vector<f16> units(words.size() * 2);
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::uint32_t u = 0;
    std::memcpy(&u, &words[i], sizeof u);
    units[2 * i] = f16::from_bits(static_cast<std::uint16_t>(u & 0xffffu));
    units[2 * i + 1] = f16::from_bits(static_cast<std::uint16_t>(u >> 16));
  }
  return units;
}

std::vector<std::int32_t> units_to_words(std::span<const f16> units) {
  std::vector<std::int32_t> words(units.size() / 2);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = word_at(units, i);
  return words;
}

double element_value(std::span<const f16> units, DType type, std::size_t i) {
  if (type == DType::kF16) return static_cast<double>(static_cast<float>(units[i]));
  return static_cast<double>(word_at(units, i));
}

std::vector<float> elements_as_floats(std::span<const f16> units, DType type) {
  const std::size_t n = units.size() / units_of(type);
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(element_value(units, type, i));
  return out;
}

std::vector<f16> floats_to_units(std::span<const float> values, DType type) {
  if (type == DType::kF16) {
    std::vector<f16> h(values.size());
    floats_to_halves(values, h);
    return h;
  }
  std::vector<std::int32_t> words(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float v = values[i];
    if (type == DType::kBool) {
      words[i] = v != 0.0F ? 1 : 0;
    } else if (std::isnan(v)) {
      words[i] = 0;
    } else {
      const double t = std::trunc(static_cast<double>(v));
      words[i] = t >= 2147483647.0    ? std::numeric_limits<std::int32_t>::max()
                 : t <= -2147483648.0 ? std::numeric_limits<std::int32_t>::min()
                                      : static_cast<std::int32_t>(t);
    }
  }
  return words_to_units(words);
}

}  // namespace ldmsim
