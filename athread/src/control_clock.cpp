// The control-core clock of MPI programs (control_clock.hpp): kept per control core in the session, advanced by the
// MPI interposition, read at spawns (launches start no earlier), joins and outputs (host_api.cpp).
#include "control_clock.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

#include "ldmsim/sim/arch.hpp"
#include "session.hpp"

namespace ldmsim::athread {

void enable_mpi(int rank, int size, MpiReport report) {
  Session& s = session();
  const std::lock_guard lock(s.mutex);
  s.mpi = MpiSession{rank, size, false, std::move(report)};
  // Open MPI's own mappings and allocations vary from run to run: mirrors placed by first use stay put.
  s.mirror.set_stable_addresses(true);
  // Launches joined before MPI_Init count as the control cores' time so far.
  if (s.machine && s.in_flight == nullptr) {
    for (auto& [index, control] : s.controls) {
      control.clock = std::max(control.clock, s.machine->group_clock(control.group));
    }
  }
}

Cycle control_clock() {
  Session& s = session();
  const std::lock_guard lock(s.mutex);
  return control_core(s, "an MPI call").clock;
}

Cycle current_cycles() {
  Session& s = session();
  const std::lock_guard lock(s.mutex);
  if (s.in_flight != nullptr) finish_in_flight(s);
  Cycle cycles = s.machine ? s.machine->stats().cycles : 0;
  for (const auto& [index, control] : s.controls) cycles = std::max(cycles, control.clock);
  return cycles;
}

void advance_control_clock(Cycle cycle) {
  Session& s = session();
  const std::lock_guard lock(s.mutex);
  ControlCore& control = control_core(s, "an MPI call");
  control.clock = std::max(control.clock, cycle);
}

double simulated_clock_hz() {
  Session& s = session();
  const std::lock_guard lock(s.mutex);
  if (s.machine) return s.machine->arch().clock_hz;
  const char* name = std::getenv("LDMSIM_ARCH");
  const std::string arch = name != nullptr && *name != '\0' ? name : "sw26010";
  try {
    return Arch::resolve(arch).clock_hz;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ldmsim athread: MPI_Init: %s\n", e.what());
    std::exit(2);
  }
}

bool write_outputs_at_finalize() {
  Session& s = session();
  const std::lock_guard lock(s.mutex);
  if (!s.mpi) return true;
  s.mpi->finalized = true;
  // With athread calls from several host threads the results are written at exit (as without MPI).
  if (host_thread_index() != 0 || s.created_threads_used) return true;
  s.outputs_written = false;  // everything so far, the MPI calls after the last athread_halt included
  return write_outputs(s, "MPI_Finalize");
}

void write_outputs_before_abort(const char* when) {
  Session& s = session();
  const std::lock_guard lock(s.mutex);
  s.outputs_written = false;
  write_outputs(s, when);
}

std::string ranked_path(const std::string& path, int rank) {
  const std::filesystem::path p(path);
  std::filesystem::path name = p.stem();
  name += ".rank" + std::to_string(rank);
  name += p.extension();
  return (p.parent_path() / name).string();
}

}  // namespace ldmsim::athread
