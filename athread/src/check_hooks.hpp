// Checking mode in the athread layer (docs/checking.md): the per-core set-up at a spawn, the reply counters the
// program watches, and the check of each load and store that slave code built with CHECK reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ldmsim/dma/request.hpp"
#include "slave_context.hpp"

namespace ldmsim::athread {

/// Set (by the ldmsim::athread_check library's initialiser) when the program's slave code reports its loads and
/// stores.
extern bool g_slave_accesses_reported;

/// A host array's name for a mirror device address (its symbol, with -rdynamic as CHECK links), else empty.
std::string host_array_name(DeviceAddr device);

/// At the start of a slave function: finds the core's checker and says what it can see.
void start_checks(SlaveContext& ctx);
/// An explicit wait on `reply`: the program has seen every request counted on it complete.
void observe_reply(SlaveContext& ctx, volatile void* reply);
/// A load or store of `size` bytes at host address `addr` by slave code at `pc` (checked against the core's requests
/// in flight, its reply counters and, for ldm_malloc'ed bytes, what was written).
void check_access(std::uintptr_t addr, std::size_t size, bool write, std::uintptr_t pc);
/// `bounds`: reports request `r` (its main side at host address `main_host`) when it starts in a host array and runs
/// past its end; `pc` is the issuing slave code.
void check_host_bounds(SlaveContext& ctx, const DmaRequest& r, std::uintptr_t main_host, std::uintptr_t pc);
/// "slave code in FUNCTION at FILE:LINE" (code_lines.hpp), or "... at OBJECT+0xOFFSET" without line information.
std::string describe_site(std::uint64_t pc);

}  // namespace ldmsim::athread
