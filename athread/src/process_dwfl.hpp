// The running process as elfutils' libdw sees it (its modules, their symbol tables and DWARF), shared by the source
// lines of slave code (code_lines.hpp) and the host arrays of local symbols (host_arrays.hpp). Facts of the process,
// shared by every host thread under one lock, made at first use and never destroyed (an at-exit report still finds
// them).
#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <mutex>

namespace ldmsim::athread {

/// Holds the lock on the process's Dwfl while in scope.
class ProcessDwfl {
 public:
  ProcessDwfl();
  /// The module holding address `at`; null when none does (heap, stack) or libdw cannot read the process. `code`:
  /// `at` is code, which some module holds, so none holding it means a module loaded since: the mappings are read
  /// again.
  Dwfl_Module* module_at(std::uintptr_t at, bool code);

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace ldmsim::athread
