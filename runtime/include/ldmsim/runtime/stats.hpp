// Statistics of a machine's runs: per core, per core group and for the whole run, in simulated cycles.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

/// Counters of one compute core, accumulated over every launch.
struct CoreStats {
  Cycle busy_cycles = 0;      ///< charged by compute() and DMA issue costs
  Cycle dma_wait_cycles = 0;  ///< waiting for DMA completions
  Cycle barrier_wait_cycles = 0;
  Cycle context_wait_cycles = 0;  ///< ready, but another model's context held the physical core (ConcurrentMachine)
  std::uint64_t dma_requests = 0;
  std::uint64_t dma_get_bytes = 0;
  std::uint64_t dma_put_bytes = 0;
  std::uint64_t dma_remote_bytes = 0;  ///< of the gets and puts, bytes in another core group's memory
  std::uint64_t ldm_high_water = 0;    ///< largest ldm footprint in any launch
  std::uint64_t lint_warnings = 0;

  Cycle waiting_cycles() const { return dma_wait_cycles + barrier_wait_cycles; }
  std::uint64_t dma_bytes() const { return dma_get_bytes + dma_put_bytes; }
};

/// One core group: its cores and its own clock.
struct GroupStats {
  Cycle cycles = 0;  ///< the group's clock: end of its last launch
  std::uint64_t launches = 0;
  std::vector<CoreStats> cores;

  std::uint64_t dma_requests() const;
  std::uint64_t dma_bytes() const;
  std::uint64_t dma_remote_bytes() const;
  std::uint64_t ldm_high_water() const;
};

/// The whole machine.
struct RunStats {
  Cycle cycles = 0;  ///< max over groups
  double seconds = 0;
  std::vector<GroupStats> groups;

  std::uint64_t dma_requests() const;
  std::uint64_t dma_bytes() const;
  std::uint64_t dma_remote_bytes() const;
  std::uint64_t ldm_high_water() const;
  /// The stats as JSON (totals, per group, and per core when `per_core`).
  nlohmann::json to_json(bool per_core = true) const;
};

}  // namespace ldmsim
