// The athread session of a process: the simulated machine athread_init creates, the launch in flight, the
// host-memory mirror, the __thread_local section and the compute core currently running. athread is a
// process-wide C API, so this is the one process-wide object of the layer; compute cores of every group run
// on one host thread (MachineOptions::threads = 1), which is what makes the section swap sound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "control_clock.hpp"
#include "host_memory.hpp"
#include "ldmsim/runtime/machine.hpp"

namespace ldmsim::athread {

struct SlaveContext;

/// An RMA's effect on one core, applied when that core's clock reaches `landing` (at its next athread call or
/// in its waits): bytes into its ldm (or into a stack array of the issuer, for a get) and a reply word raised.
struct RmaDelivery {
  Cycle landing = 0;
  std::uint64_t seq = 0;  // issue order, for equal landing cycles
  LdmAddr offset = 0;
  std::vector<std::byte> data;       // empty: only a reply
  std::byte* host_target = nullptr;  // a stack array of the receiving core instead of its ldm
  bool has_reply = false;
  LdmAddr reply_offset = 0;
};

/// A control core: the spawns of one host thread (the main thread, or a thread the program created with
/// pthread_create), on the core group of that thread (docs/athread.md "One host thread per core group").
struct ControlCore {
  int group = 0;
  Launch launch;
  bool spawned = false;  // spawned and not yet joined by this control core
  std::string spawned_name;
  std::string trap;                 // the launch's fault, when the launch was finished before its own join
  bool spawned_all_groups = false;  // the launch in flight runs on every core group (athread_spawn_cgs)
  Cycle clock = 0;                  // MPI mode only: the control core's simulated time (control_clock.hpp); else unused
};

/// MPI mode (set at MPI_Init by the interposition of programs built with `MPI`; absent otherwise).
struct MpiSession {
  int rank = 0;
  int size = 1;
  bool finalized = false;
  MpiReport report;
};

/// A BCAST / ROW get into a stack array reached this core's ldm at `offset`: the bytes go to the core's own stack
/// array at the same depth (the same ldm offset in ldmsim's stack mapping) at its next athread call or return.
struct StackDelivery {
  LdmAddr offset = 0;
  std::uint64_t length = 0;
  std::uintptr_t depth = 0;
};

struct Session {
  std::unique_ptr<Machine> machine;
  // Every athread call of a control core, and the finish of launches, hold this; one launch is in the machine at a
  // time (`in_flight`), so compute cores of every group still run one at a time (the section swap needs that).
  std::recursive_mutex mutex;
  std::map<int, ControlCore> controls;  // by host thread index (0: the main thread and threads not created by
                                        // the program's own pthread_create calls)
  ControlCore* in_flight = nullptr;
  bool created_threads_used = false;  // some thread the program created made athread calls
  HostMirror mirror;
  int num_threads = 0;                // 0 = every core of the group
  std::uint64_t stack_bytes = 0;      // 0: the stack grows down from the top of ldm into what ldm_malloc left
  std::size_t fiber_stack_bytes = 0;  // the host stack of each compute core's fiber (MachineOptions)
  // The ldmsim_tl section (slave files' __thread_local globals) and its initial contents.
  std::byte* tl_begin = nullptr;
  std::byte* tl_end = nullptr;
  std::vector<std::byte> tl_initial;
  bool outputs_written = false;    // trace and summary written (athread_halt, or at exit)
  bool check_reported = false;     // LDMSIM_CHECK found something: the process exits with status 4
  bool trap_exit = false;          // exiting with status 3 after a trap (which takes precedence over 4)
  bool all_groups_used = false;    // some spawn ran on every core group (athread_spawn_cgs)
  SlaveContext* active = nullptr;  // the compute core whose data is in the section right now
  Cycle latest_core_cycle = 0;     // the latest clock of any core at an athread call (the summary after a crash)
  // RMA effects not yet applied, per (core group, core), in (landing, seq) order; reset at each spawn.
  std::map<std::pair<int, int>, std::vector<RmaDelivery>> rma_pending;
  std::uint64_t rma_pending_count = 0;
  std::uint64_t rma_seq = 0;
  // Broadcast gets into stack arrays not yet copied into the receivers' arrays, per (core group, core).
  std::map<std::pair<int, int>, std::vector<StackDelivery>> stack_pending;
  std::size_t stack_pending_count = 0;
  // CRTS_scoll_redurt: each core's contribution, per core group, indexed by core id.
  std::map<int, std::vector<std::vector<std::byte>>> collective_parts;
  std::optional<MpiSession> mpi;

  std::size_t tl_size() const { return static_cast<std::size_t>(tl_end - tl_begin); }
};

/// The process's session (created on first use).
Session& session();
/// The calling host thread's index: 0 for the main thread, k for the k-th thread the program's own files created
/// with pthread_create (bound by the wrapper in tl_anchor.c).
int host_thread_index();
/// The fiber stack the athread layer asks for on `arch`: room for any slave stack that fits the local store, with
/// host frames several times larger than sw_64 ones (committed only where touched).
std::size_t fiber_stack_bytes_for(std::uint64_t ldm_bytes);
/// The session's results: the trace named by LDMSIM_TRACE (with the rank in its name under MPI) and a summary line
/// on stderr. At athread_halt (each round), at MPI_Finalize, or at exit; `crashed`: from a fatal-signal handler,
/// mid-launch. False when the trace could not be written.
bool write_outputs(Session& s, const char* when, bool crashed = false);
/// Joins the launch in the machine (s.in_flight), keeping a fault for its control core's own join.
void finish_in_flight(Session& s);
/// The calling host thread's control core (exits with status 2 when the thread has no core group).
ControlCore& control_core(Session& s, const char* api);
/// Writes the summary line and the trace (LDMSIM_TRACE) after a crash, from a fatal-signal handler (best effort:
/// not async-signal-safe).
void write_outputs_after_crash(const char* when);

}  // namespace ldmsim::athread
