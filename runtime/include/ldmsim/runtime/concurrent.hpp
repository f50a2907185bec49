// Several models on one simulated machine (multi-model pipelining). Each model gets a context: a Machine of its own
// (its own clocks, stats and share of every core's ldm) on the shared node (main memory, DMA engines, the trace
// and the compute cores). The models' programs run as fibers of one host thread in simulated-time order, so a
// core switches to another model's ready work when its current model stalls (coarse-grained, at a cost of
// arch.context_switch_cycles); docs/pipelining.md.
#pragma once

#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ldmsim/runtime/machine.hpp"
#include "ldmsim/sim/arch.hpp"

namespace ldmsim {

namespace detail {
struct NodeState;
}

/// How the contexts' programs are run: all at once (pipelined), or one after another on the same contexts (the
/// baseline: the same mappings and ldm shares, without the overlap).
enum class ContextSchedule : std::uint8_t { kPipelined, kSequential };

/// What one physical core did, summed over the contexts.
struct SharedCoreStats {
  Cycle busy_cycles = 0;    ///< the contexts' compute and DMA issue costs (CoreStats::busy_cycles, summed; a
                            ///< PhysicalCore's own record leaves it 0: ConcurrentMachine::stats fills it in)
  Cycle switch_cycles = 0;  ///< spent switching between contexts
  std::uint64_t switches = 0;
  /// How often the core's schedule spans were merged in pairs to stay within their bound (the picture coarsens).
  std::uint64_t schedule_compactions = 0;
};

/// A physical core's time held by one context (or spent switching: context == kSwitchSpan).
struct ScheduleSpan {
  Cycle start = 0;
  Cycle end = 0;
  std::uint32_t context = 0;
};
inline constexpr std::uint32_t kSwitchSpan = std::numeric_limits<std::uint32_t>::max();

struct ConcurrentStats {
  Cycle makespan = 0;                                ///< the latest clock of any context
  std::vector<std::vector<SharedCoreStats>> groups;  ///< [cg][core]
  std::vector<Cycle> context_end;                    ///< each context's latest clock

  Cycle busy_cycles() const;
  Cycle switch_cycles() const;
  std::uint64_t switches() const;
  /// The most compactions of any core's schedule spans (0: schedule() is exact).
  std::uint64_t schedule_compactions() const;
  /// Core-cycles in [0, makespan) in which no context held a core and none was switching.
  Cycle idle_core_cycles() const;
  nlohmann::json to_json() const;
};

class ConcurrentMachine {
 public:
  /// One context per name (at least one, at most 64). Each context sees the arch with ldm_bytes cut to its
  /// share (the store divided evenly, rounded down to 1 KiB); ConfigError when a share would be under 1 KiB.
  ConcurrentMachine(Arch arch, std::vector<std::string> context_names, MachineOptions options = {});
  ~ConcurrentMachine();
  ConcurrentMachine(const ConcurrentMachine&) = delete;
  ConcurrentMachine& operator=(const ConcurrentMachine&) = delete;

  /// The ldm each of `contexts` contexts sees on `arch` (ConfigError when under 1 KiB).
  static std::uint64_t ldm_share(const Arch& arch, std::size_t contexts);

  std::size_t contexts() const { return contexts_.size(); }
  Machine& context(std::size_t index) { return *contexts_.at(index); }
  const std::string& name(std::size_t index) const { return names_.at(index); }
  /// The node's arch (the full ldm; each context's Machine::arch() shows its share).
  const Arch& arch() const;

  /// Runs programs[k] on context(k). `kPipelined`: all at once, as fibers of one host thread (whatever
  /// MachineOptions::threads says) in simulated-time order. `kSequential` (and a single program): one after
  /// another on the calling thread, each starting at the node's latest clock, its launches on the host threads as
  /// on a plain Machine. Returns what each program threw (null: it finished). A deadlock among the programs'
  /// kernels becomes a `deadlock` fault of each stuck launch, never a hang.
  std::vector<std::exception_ptr> run(const std::vector<std::function<void(Machine&)>>& programs,
                                      ContextSchedule schedule);

  ConcurrentStats stats() const;
  /// Each physical core's spans, [cg][core], in time order (for a schedule picture).
  std::vector<std::vector<std::vector<ScheduleSpan>>> schedule() const;
  /// The trace of the whole node (every context's DMA events and launch markers, the launches named
  /// "CONTEXT:kernel"); `run_info` is merged into the header, whose cycles are the makespan.
  void write_trace(const std::filesystem::path& file, const nlohmann::json& run_info = {}) const;

 private:
  std::shared_ptr<detail::NodeState> node_;
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<Machine>> contexts_;
};

}  // namespace ldmsim
