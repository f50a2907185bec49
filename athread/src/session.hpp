// The athread session of a process: the simulated machine athread_init creates, the launch in flight, the
// host-memory mirror, the __thread_local section and the compute core currently running. athread is a
// process-wide C API, so this is the one process-wide object of the layer; compute cores of every group run
// on one host thread (MachineOptions::threads = 1), which is what makes the section swap sound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "host_memory.hpp"
#include "ldmsim/runtime/machine.hpp"

namespace ldmsim::athread {

struct SlaveContext;

/// When an RMA reply word (core group, core, ldm offset) reached a value.
struct ReplyEvent {
  int value = 0;
  Cycle arrival = 0;
};

struct Session {
  std::unique_ptr<Machine> machine;
  Launch launch;
  bool spawned = false;
  std::string spawned_name;
  HostMirror mirror;
  int num_threads = 0;            // 0 = every core of the group
  std::uint64_t stack_bytes = 0;  // 0: the stack grows down from the top of ldm into what ldm_malloc left
  // The ldmsim_tl section (slave files' __thread_local globals) and its initial contents.
  std::byte* tl_begin = nullptr;
  std::byte* tl_end = nullptr;
  std::vector<std::byte> tl_initial;
  bool outputs_written = false;
  bool all_groups_used = false;  // some spawn ran on every core group (athread_spawn_cgs)    // trace and summary
                                 // (athread_halt, or at exit)
  SlaveContext* active = nullptr;
  std::map<std::tuple<int, int, LdmAddr>, std::vector<ReplyEvent>>
      rma_replies;  // reset at each spawn  // the compute core whose data is in the section right now

  std::size_t tl_size() const { return static_cast<std::size_t>(tl_end - tl_begin); }
};

/// The process's session (created on first use).
Session& session();

}  // namespace ldmsim::athread
