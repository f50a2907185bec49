// Code sites of kernels on the C++ API (docs/checking.md "Sites"): the std::source_location a request call takes
// as its default argument, kept as one word so checking reports, lint sites and traps can name "FILE:LINE".
#pragma once

#include <bit>
#include <cstdint>
#include <source_location>
#include <string>
#include <type_traits>

namespace ldmsim::detail {

static_assert(sizeof(std::source_location) == sizeof(std::uint64_t) &&
                  std::is_trivially_copyable_v<std::source_location>,
              "a source location is one pointer to the compiler's constant record");

/// The location as a site word (0: a default-constructed location, which names no code). The record it points to
/// is a constant of the program, so the word stays valid and is the same for every request of one call.
inline std::uint64_t code_site_of(std::source_location where) {
  return std::bit_cast<std::uint64_t>(where);
}
/// "kernel code at FILE:LINE" of a site word; FILE relative to the project's source tree when it lies inside it.
std::string code_site_text(std::uint64_t site);

}  // namespace ldmsim::detail
