// Private state of a Machine: main memory and, per core group, its local stores, DMA engine, trace, stats,
// clock and fiber stacks. Everything a group owns is touched only by the host thread running that group.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "ldmsim/dma/engine.hpp"
#include "ldmsim/runtime/machine.hpp"
#include "ldmsim/runtime/stats.hpp"
#include "ldmsim/sim/main_memory.hpp"
#include "ldmsim/trace/recorder.hpp"
#include "stack_pool.hpp"

namespace ldmsim::detail {

class LaunchState;

/// A lazily committed host mapping (local stores of a group).
class HostMapping {
 public:
  explicit HostMapping(std::size_t bytes);
  ~HostMapping();
  HostMapping(const HostMapping&) = delete;
  HostMapping& operator=(const HostMapping&) = delete;
  std::byte* data() const { return data_; }

 private:
  std::byte* data_;
  std::size_t bytes_;
};

/// Where the trace recorders spill: MachineOptions::trace_spill_dir, or the system temp directory (TMPDIR).
std::filesystem::path spill_directory(const MachineOptions& options);

struct GroupState {
  GroupState(const Arch& arch, int cg, MainMemory& memory, const MachineOptions& options);

  int cg;
  HostMapping ldm;  // cores back to back, arch.ldm_bytes each
  TraceRecorder trace;
  DmaEngine engine;
  StackPool stacks;
  GroupStats stats;
};

class MachineImpl {
 public:
  MachineImpl(Arch arch, MachineOptions options);

  /// Throws std::logic_error if a launch is in flight (the control core must join before touching state).
  void require_idle(const char* what) const;

  Arch arch;
  MachineOptions options;
  unsigned threads;
  MainMemory memory;
  std::vector<std::unique_ptr<GroupState>> groups;
  bool launch_active = false;
  std::weak_ptr<LaunchState> active_launch;  // joined by ~Machine if the user never did
};

}  // namespace ldmsim::detail
