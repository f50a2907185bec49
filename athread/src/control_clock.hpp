// What the MPI interposition (athread/mpi/) needs of the athread session: the simulated clock of the calling host
// thread's control core, which MPI calls advance, and the rank that names the process's outputs. No MPI header here:
// only programs built with `MPI` link the interposition, and without it none of this is ever switched on, so
// non-MPI programs run exactly as before.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "ldmsim/sim/types.hpp"

namespace ldmsim::athread {

/// What the MPI layer reports into the athread outputs.
struct MpiReport {
  std::function<std::string()> summary;    ///< appended to the summary line ("MPI: ... cycles ...")
  std::function<nlohmann::json()> record;  ///< merged into the trace header under "mpi"
  std::function<nlohmann::json()> stats;   ///< the "mpi" section of the stats file (LDMSIM_STATS)
};

/// Switches the session to MPI mode (at MPI_Init): from now on each control core keeps a clock that MPI calls
/// advance, launches start no earlier than it, the outputs carry `rank` in their names and in the summary line.
void enable_mpi(int rank, int size, MpiReport report);
/// The calling host thread's control-core clock: where it stands now in simulated time (after its last join, or
/// at its last spawn while that launch is in flight, plus the MPI time since).
Cycle control_clock();
/// The process's simulated time so far, as its summary line reports it: the launch in flight finished, the latest of
/// the machine's clocks and every control core's (MPI_Finalize combines it over the ranks into the makespan).
Cycle current_cycles();
/// Moves the calling host thread's control-core clock forward to `cycle` (never back).
void advance_control_clock(Cycle cycle);
/// The simulated clock rate (Hz) of the arch the session runs (LDMSIM_ARCH when athread_init has not run yet);
/// exits with status 2 naming the arch when it cannot be resolved.
double simulated_clock_hz();
/// MPI_Finalize: writes the summary line and the trace (MPI mode writes them here rather than at athread_halt,
/// so the MPI calls after the last halt are counted). False when the trace could not be written.
bool write_outputs_at_finalize();
/// Before MPI_Abort on a cross-rank hang: the summary line and the trace so far.
void write_outputs_before_abort(const char* when);
/// `path` with ".rank<R>" inserted before its extension ("run/trace.ldmtrace" -> "run/trace.rank3.ldmtrace").
std::string ranked_path(const std::string& path, int rank);

}  // namespace ldmsim::athread
