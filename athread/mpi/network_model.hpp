// The LogGP network model that times an MPI program's messages in simulated cycles (docs/athread.md "MPI"):
// o (overhead: a processor's time to send or receive one message), L (latency on the wire), g (gap: the least time
// between two message starts of one rank) and G (time per byte of a long message), read from the environment.
#pragma once

#include <cstdint>

#include "ldmsim/sim/types.hpp"

namespace ldmsim::athread::mpi {

struct NetworkModel {
  double overhead_ns = 300;       // o: an estimate (no published TaihuLight figure)
  double latency_ns = 1000;       // L: an estimate
  double gap_ns = 300;            // g: an estimate
  double ns_per_byte = 1 / 16.0;  // G: 16 GB/s, the published injection bandwidth (128 Gb/s per node)
  double clock_hz = 1.45e9;       // the arch's clock: ns -> cycles
  bool timed = true;              // LDMSIM_MPI_TIMING=off: MPI calls pass straight through, no simulated time
  double watchdog_seconds = 600;  // host seconds without progress in one MPI call before the hang report; 0: never

  /// Defaults overridden by LDMSIM_MPI_OVERHEAD_NS, LDMSIM_MPI_LATENCY_NS, LDMSIM_MPI_GAP_NS,
  /// LDMSIM_MPI_NS_PER_BYTE, LDMSIM_MPI_TIMING (on / off), LDMSIM_MPI_WATCHDOG_SECONDS. std::invalid_argument
  /// naming the variable for a value that is not a non-negative number.
  static NetworkModel from_environment(double clock_hz);

  /// Cycles of `ns` nanoseconds, rounded up.
  Cycle cycles(double ns) const;
  Cycle overhead() const { return cycles(overhead_ns); }
  Cycle gap() const { return cycles(gap_ns); }
  /// The sender's busy time for a `bytes` message: o + (bytes - 1) G.
  Cycle send_busy(std::uint64_t bytes) const;
  /// From the start of a send to the end of its receive when the receiver is waiting: o + (bytes - 1) G + L + o.
  Cycle transfer(std::uint64_t bytes) const;
};

/// ceil(log2(ranks)): the levels of a binomial tree (or rounds of a dissemination barrier) over `ranks` ranks.
int tree_levels(int ranks);

}  // namespace ldmsim::athread::mpi
