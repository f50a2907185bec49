// The program's host arrays by their symbols (docs/checking.md "bounds"): globals and statics that the dynamic
// symbol table lists, which is every global of a program linked with -rdynamic (as CHECK links). Heap arrays
// (malloc) and file-local statics have no entry, so nothing is said about them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ldmsim::athread {

/// A host array: a data object of the dynamic symbol table.
struct HostArray {
  std::uintptr_t start = 0;
  std::uint64_t bytes = 0;
  std::string name;
  std::uintptr_t end() const { return start + bytes; }
};

/// The data object whose bytes hold host address `at`; none when `at` lies in no listed object.
std::optional<HostArray> host_array_at(std::uintptr_t at);

}  // namespace ldmsim::athread
