// Enum <-> name tables: one table per enum serves to_string, parsing and the "expected one of" list of an error
// message, instead of a switch for each direction that can drift from the other.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace ldmsim {

template <typename E, std::size_t N>
struct EnumNames {
  std::array<std::pair<E, std::string_view>, N> entries;

  /// The name of `value`; `fallback` for a value outside the table (a corrupted or future enumerator).
  constexpr std::string_view name(E value, std::string_view fallback = "?") const noexcept {
    for (const auto& [e, n] : entries) {
      if (e == value) return n;
    }
    return fallback;
  }
  /// The enumerator called `name`, if any (exact, case-sensitive).
  constexpr std::optional<E> parse(std::string_view name) const noexcept {
    for (const auto& [e, n] : entries) {
      if (n == name) return e;
    }
    return std::nullopt;
  }
  /// Every name in table order, joined: list() is "method, naive, none", list(", ", " or ") "method, naive or none".
  std::string list(std::string_view separator = ", ", std::string_view last_separator = ", ") const {
    std::string out;
    for (std::size_t i = 0; i < N; ++i) {
      if (i > 0) out += i + 1 == N ? last_separator : separator;
      out += entries[i].second;
    }
    return out;
  }
};

/// enum_names<Kind>({{Kind::kA, "a"}, {Kind::kB, "b"}}): the table, its size deduced.
template <typename E, std::size_t N>
constexpr EnumNames<E, N> enum_names(const std::pair<E, std::string_view> (&entries)[N]) {
  EnumNames<E, N> table{};
  for (std::size_t i = 0; i < N; ++i) table.entries[i] = entries[i];
  return table;
}

}  // namespace ldmsim
