// The built-in demo of `ldmsim run`: four kernels that move and transform fp16 tiles (a double-buffered
// scale, a row reduction over strided gets, a BCAST weight vector, a barrier-synchronised two-phase
// centring), each checked bit for bit against a host computation. Sizes scale with the arch.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ldmsim/runtime/machine.hpp"

namespace ldmsim::cli {

/// How the demo runs.
struct DemoOptions {
  /// Testing aid (`--demo-fault`): core 1 of core group 0 fetches its first tile of the scale kernel with two
  /// odd-length gets, which trap dma-misaligned (under the lint policy they warn and the data stays correct).
  bool inject_misaligned_dma = false;
  /// Testing aid (`--demo-race`): core 1 of core group 0 changes the source of its first put of the scale kernel
  /// before waiting for it (the result stays right, as data moves at issue; checking mode reports put-source).
  bool inject_put_source_change = false;
};

/// What one demo kernel did.
struct DemoKernelResult {
  std::string name;
  std::string summary;
  Cycle cycles = 0;  ///< simulated cycles of the launch (machine clock after minus before)
  std::uint64_t dma_requests = 0;
  std::uint64_t dma_bytes = 0;
  std::uint64_t elements = 0;  ///< output elements checked
  std::string status;          ///< "ok", "mismatch" or "fault"
  std::string mismatch;        ///< the first wrong element, when status is "mismatch"

  nlohmann::json to_json() const;
};

/// Runs the demo kernels one after another on `machine`, appending each kernel's result to `results` as soon
/// as it is known: a caller catching the Fault of a trapping kernel still has every result before it, and
/// the trapping kernel itself with status "fault".
void run_demo(Machine& machine, const DemoOptions& options, std::vector<DemoKernelResult>& results);

}  // namespace ldmsim::cli
