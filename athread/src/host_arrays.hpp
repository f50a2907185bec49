// The program's host arrays by their symbols (docs/checking.md "bounds"): the data objects of the dynamic symbol
// table (every global of a program linked with -rdynamic, as CHECK links), and else of the full symbol table
// (.symtab: also file-local statics, and globals without -rdynamic; gone when the program is stripped), and the heap
// blocks the program's own code allocated when it was built with CHECK (athread/check/heap_blocks.cpp).
#pragma once

#include <cstddef>
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

/// The data object or heap block whose bytes hold host address `at`; none when `at` lies in no listed object.
std::optional<HostArray> host_array_at(std::uintptr_t at);

/// A heap block of `bytes` bytes at `block` (null: nothing) was allocated; named "malloc'ed block" in reports.
void note_heap_block(void* block, std::size_t bytes);
/// The heap block at `block` was freed (or moved by realloc).
void forget_heap_block(void* block);

}  // namespace ldmsim::athread
