// The control-core half of the athread API: athread_init / spawn / join / halt on an ldmsim::Machine, and
// the registration of the __thread_local section by the program's anchor object.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "athread.h"
#include "buffer_names.hpp"
#include "check_hooks.hpp"
#include "fatal_signals.hpp"
#include "ldmsim/runtime/check.hpp"
#include "ldmsim/runtime/check_names.hpp"
#include "ldmsim/runtime/lint_sites.hpp"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/output_file.hpp"
#include "session.hpp"
#include "slave_context.hpp"
#include "stats_file.hpp"

namespace ldmsim::athread {

Session& session() {
  static Session instance;
  return instance;
}

namespace {
thread_local int t_host_thread = 0;  // host threads only: compute cores never read it
}  // namespace

int host_thread_index() {
  return t_host_thread;
}

/// Launches fn(arg) on the calling control core's group, or on every core group; `name` names the kernel.
int spawn(void (*fn)(void*), void* arg, const char* name, bool all_groups);

namespace {
std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

[[noreturn]] void fail(const char* what, int status) {
  std::fprintf(stderr, "ldmsim athread: %s\n", what);
  std::exit(status);
}

std::uint64_t parse_stack_bytes(const std::string& text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value > (std::uint64_t{1} << 30)) {
    throw std::invalid_argument("LDMSIM_ATHREAD_STACK_BYTES=" + text +
                                " is not a byte count up to 2^30 (unset it to let the stack take the free ldm)");
  }
  return (value + 63) / 64 * 64;
}

/// The cycles the summary line and the stats file report.
ldmsim::Cycle summary_cycles(const Session& s, const RunStats& stats, bool crashed) {
  // After a crash mid-launch the launch's cycles are not in the stats yet: the latest clock a core showed at an
  // athread call stands in for them.
  ldmsim::Cycle cycles = crashed ? std::max(stats.cycles, s.latest_core_cycle) : stats.cycles;
  if (s.mpi) {
    for (const auto& [index, control] : s.controls) cycles = std::max(cycles, control.clock);
  }
  return cycles;
}
}  // namespace

bool write_outputs(Session& s, const char* when, bool crashed) {
  if (!s.machine || s.outputs_written) return true;
  bool written = true;
  s.outputs_written = true;
  if (s.mpi && !crashed) {
    // The MPI time since each control core's last launch shows in the cycles (the machine is idle here).
    if (s.in_flight != nullptr) finish_in_flight(s);
    for (const auto& [index, control] : s.controls) s.machine->start_no_earlier({control.group}, control.clock);
  }
  const auto stats = s.machine->stats();
  std::string trace_note;
  if (const char* trace_env = std::getenv("LDMSIM_TRACE"); trace_env != nullptr && *trace_env != '\0') {
    // Each rank writes its own file into the one run directory.
    const std::string trace = s.mpi ? ranked_path(trace_env, s.mpi->rank) : std::string(trace_env);
    nlohmann::json run_info = {{"program", "athread"}};
    if (s.mpi) run_info["mpi"] = s.mpi->report.record ? s.mpi->report.record() : nlohmann::json::object();
    try {
      if (crashed) {
        run_info["crashed"] = when;
        s.machine->write_trace_after_crash(trace, run_info);
      } else {
        s.machine->write_trace(trace, run_info);
      }
      trace_note = ", trace " + trace;
    } catch (const std::exception& e) {
      trace_note = std::string(", trace not written: ") + e.what();
      written = false;
    }
  }
  if (const char* stats_env = std::getenv("LDMSIM_STATS"); stats_env != nullptr && *stats_env != '\0') {
    const std::string path = s.mpi ? ranked_path(stats_env, s.mpi->rank) : std::string(stats_env);
    const nlohmann::json mpi = s.mpi && s.mpi->report.stats ? s.mpi->report.stats() : nlohmann::json();
    const std::string error = write_stats_file(
        path, stats_document(stats, summary_cycles(s, stats, crashed), s.machine->arch().clock_hz,
                             s.machine->arch().name, when, !crashed && (!s.mpi || s.mpi->finalized), mpi));
    trace_note += error.empty() ? ", stats " + path : ", stats not written: " + error;
    written = written && error.empty();
  }
  if (!crashed) {
    // Checking reports (LDMSIM_CHECK): one line per site, then exit status 4 at exit (docs/checking.md).
    const auto reports = ldmsim::check_reports(*s.machine);
    for (const auto& r : reports) std::fprintf(stderr, "ldmsim athread: %s\n", ldmsim::format_check_report(r).c_str());
    if (!reports.empty()) s.check_reported = true;
    ldmsim::clear_check_reports(*s.machine);
    // Lint warnings (LDMSIM_ALIGNMENT=lint, misaligned simd loads): one line per site with its count, so far.
    for (const auto& site : ldmsim::lint_sites(*s.machine)) {
      std::fprintf(stderr, "ldmsim athread: %s\n", ldmsim::format_lint_site(site).c_str());
    }
  }
  const std::string groups =
      s.all_groups_used ? fmt::format("the slowest of {} core groups", s.machine->arch().core_groups) : "core group 0";
  const ldmsim::Cycle cycles = summary_cycles(s, stats, crashed);
  std::string rank;
  std::string mpi_note;
  if (s.mpi) {
    rank = fmt::format("rank {} of {}: ", s.mpi->rank, s.mpi->size);
    if (s.mpi->report.summary) mpi_note = ", " + s.mpi->report.summary();
  }
  std::fprintf(stderr, "ldmsim athread: %s%llu simulated cycles on %s%s%s (%s)\n", rank.c_str(),
               static_cast<unsigned long long>(cycles), groups.c_str(), mpi_note.c_str(), trace_note.c_str(), when);
  return written;
}

namespace {

void write_outputs_at_exit() {
  Session& s = session();
  if (s.active != nullptr) return;  // exit() called by slave code, on the launch's own thread: nothing to join
  const std::lock_guard lock(s.mutex);
  if (s.in_flight != nullptr) finish_in_flight(s);  // its cycles and DMA belong in the results
  bool trapped = false;
  for (auto& [index, control] : s.controls) {
    if (!control.spawned || control.trap.empty()) continue;
    control.spawned = false;
    std::fprintf(stderr, "ldmsim athread: %s trapped: %s\n", control.spawned_name.c_str(), control.trap.c_str());
    trapped = true;
  }
  const char* when = s.created_threads_used ? "at exit, athread calls from several host threads"
                     : s.mpi                ? "at exit, MPI_Finalize was not called"
                                            : "at exit, athread_halt was not called";
  const bool written = write_outputs(s, when);
  if (trapped) std::_Exit(3);   // a trap is exit status 3, as at athread_join
  if (!written) std::_Exit(2);  // the trace asked for is missing: an output that cannot be written is bad input
  if (s.check_reported && !s.trap_exit) {  // checking found bugs: status 4, distinct from a trap (docs/checking.md)
    std::fflush(nullptr);
    std::_Exit(4);
  }
}
}  // namespace

std::size_t fiber_stack_bytes_for(std::uint64_t ldm_bytes) {
  return static_cast<std::size_t>(std::max<std::uint64_t>(std::uint64_t{1} << 20, 4 * ldm_bytes + (256u << 10)));
}

void write_outputs_after_crash(const char* when) {
  write_outputs(session(), when, true);
}

void finish_in_flight(Session& s) {
  ControlCore& control = *s.in_flight;
  s.in_flight = nullptr;
  try {
    control.launch.join();
  } catch (const std::exception& e) {
    control.trap = e.what();
  }
  if (!s.tl_initial.empty()) std::copy(s.tl_initial.begin(), s.tl_initial.end(), s.tl_begin);
}

ControlCore& control_core(Session& s, const char* api) {
  const int index = host_thread_index();
  auto [it, added] = s.controls.try_emplace(index);
  if (added && index > 0) {
    const int groups = s.machine ? static_cast<int>(s.machine->arch().core_groups) : 1;
    if (index > groups) {
      fail(fmt::format("{} from host thread number {} of those the program created: the arch has {} core groups, and "
                       "each host thread the program creates with pthread_create controls the core group of its "
                       "creation order (the first: group 0); create at most {} such threads",
                       api, index, groups, groups)
               .c_str(),
           2);
    }
    it->second.group = index - 1;
  }
  if (index > 0) s.created_threads_used = true;
  return it->second;
}

}  // namespace ldmsim::athread

using ldmsim::athread::session;

extern "C" {

/// Called before main by the anchor object ldmsim_add_athread_program links into every program.
void __ldmsim_athread_register_tl(char* begin, char* end) {
  auto& s = session();
  s.tl_begin = reinterpret_cast<std::byte*>(begin);
  s.tl_end = reinterpret_cast<std::byte*>(end);
}

int athread_init(void) {
  auto& s = session();
  const std::lock_guard lock(s.mutex);
  s.outputs_written = false;  // a new round: the next athread_halt reports everything so far
  if (s.machine) {
    ldmsim::athread::control_core(s, "athread_init");
    return 0;
  }
  try {
    ldmsim::MachineOptions options;
    options.threads = 1;  // every core group on one host thread: the __thread_local section is swapped per core
    const char* trace = std::getenv("LDMSIM_TRACE");
    options.trace = trace != nullptr && *trace != '\0';  // empty: as unset
    if (options.trace) {
      // Refused before anything runs, as `ldmsim run` refuses its outputs: a directory, device or FIFO.
      ldmsim::check_output_target(s.mpi ? ldmsim::athread::ranked_path(trace, s.mpi->rank) : std::string(trace),
                                  "trace file (LDMSIM_TRACE)");
    }
    if (const char* stats = std::getenv("LDMSIM_STATS"); stats != nullptr && *stats != '\0') {
      ldmsim::check_output_target(s.mpi ? ldmsim::athread::ranked_path(stats, s.mpi->rank) : std::string(stats),
                                  "stats file (LDMSIM_STATS)");
    }
    const std::string alignment = ldmsim::athread::env_or("LDMSIM_ALIGNMENT", "trap");
    if (alignment != "trap" && alignment != "lint") {
      throw std::invalid_argument("LDMSIM_ALIGNMENT=" + alignment + " is neither trap nor lint");
    }
    if (alignment == "lint") options.alignment = ldmsim::AlignmentPolicy::kLint;
    auto arch = ldmsim::Arch::resolve(ldmsim::athread::env_or("LDMSIM_ARCH", "sw26010"));
    options.fiber_stack_bytes = ldmsim::athread::fiber_stack_bytes_for(arch.ldm_bytes);
    s.fiber_stack_bytes = options.fiber_stack_bytes;
    s.machine = std::make_unique<ldmsim::Machine>(std::move(arch), options);
    ldmsim::enable_checks(*s.machine,
                          ldmsim::parse_check_set(ldmsim::athread::env_or("LDMSIM_CHECK", "off"), "LDMSIM_CHECK"));
    ldmsim::set_check_buffer_namer(*s.machine, ldmsim::athread::host_array_name);
    ldmsim::set_check_ldm_namer(*s.machine, ldmsim::athread::active_ldm_name);
    // Unset: no fixed size, the stack takes the ldm that ldm_malloc has not (slave_context.cpp).
    s.stack_bytes = ldmsim::athread::parse_stack_bytes(ldmsim::athread::env_or("LDMSIM_ATHREAD_STACK_BYTES", "0"));
  } catch (const std::exception& e) {
    ldmsim::athread::fail(e.what(), 2);
  }
  ldmsim::athread::control_core(s, "athread_init");
  ldmsim::athread::install_fatal_signal_handlers();
  static const bool registered = std::atexit(ldmsim::athread::write_outputs_at_exit) == 0;
  (void)registered;
  if (s.tl_begin != nullptr && s.tl_size() != 0 && s.tl_initial.empty()) {
    s.tl_initial.assign(s.tl_begin, s.tl_end);
  }
  return 0;
}

int __ldmsim_athread_spawn(void (*fn)(void*), void* arg, const char* name) {
  return ldmsim::athread::spawn(fn, arg, name, false);
}

int __ldmsim_athread_spawn_cgs(void (*fn)(void*), void* arg, const char* name) {
  return ldmsim::athread::spawn(fn, arg, name, true);
}

int athread_init_cgs(void) {
  return athread_init();
}

int athread_join_cgs(void) {
  return athread_join();
}

int athread_halt_cgs(void) {
  return athread_halt();
}

void CRTS_init(void) {
  if (session().active == nullptr) athread_init();
}

int current_array_id(void) {
  auto& s = session();
  const std::lock_guard lock(s.mutex);
  return ldmsim::athread::control_core(s, "current_array_id").group;
}

void __ldmsim_athread_bind_thread(int index) {
  ldmsim::athread::t_host_thread = index;
}

int __ldmsim_athread_next_thread(void) {
  static std::atomic<int> created{0};
  return ++created;
}

void* _sw_xmalloc(size_t bytes) {
  return std::malloc(bytes);
}

void _sw_xfree(void* ptr) {
  std::free(ptr);
}

}  // extern "C"

namespace ldmsim::athread {

int spawn(void (*fn)(void*), void* arg, const char* name, bool all_groups) {
  auto& s = session();
  const std::lock_guard lock(s.mutex);
  const char* api = all_groups ? "athread_spawn_cgs" : "athread_spawn";
  if (!s.machine) fail((std::string(api) + " before athread_init").c_str(), 2);
  ControlCore& control = control_core(s, api);
  if (control.spawned) {
    fail((std::string(api) + " while the previous spawn was not joined (call athread_join)").c_str(), 2);
  }
  // Another control core's launch still in the machine runs to its end first: the groups' clocks are their own,
  // so what each group computes and when does not depend on which host thread came first.
  if (s.in_flight != nullptr) finish_in_flight(s);
  s.mirror.refresh(s.machine->memory());
  s.rma_pending.clear();
  s.rma_pending_count = 0;
  s.stack_pending.clear();
  s.stack_pending_count = 0;
  ldmsim::LaunchSpec spec;
  if (!all_groups) spec.groups = {control.group};  // empty: every core group
  s.all_groups_used = s.all_groups_used || all_groups || control.group != 0;
  if (s.mpi) {
    // The control core spawns at its own time, which MPI calls may have moved past the group's clock.
    std::vector<int> groups = spec.groups;
    if (all_groups) {
      for (int g = 0; g < static_cast<int>(s.machine->arch().core_groups); ++g) groups.push_back(g);
    }
    s.machine->start_no_earlier(groups, control.clock);
  }
  control.spawned_all_groups = all_groups;
  spec.name = std::string("slave_") + name;
  spec.node_sync = true;  // the groups of a spawn run together, so athread_ssync_node can join them
  control.spawned_name = spec.name;
  control.trap.clear();
  // Spawns of different host threads share host memory and no barrier: the checker compares their requests.
  const int thread = host_thread_index();
  ldmsim::set_launch_control(*s.machine, static_cast<std::uint32_t>(thread),
                             thread == 0 ? std::string("the main thread") : fmt::format("host thread {}", thread));
  control.launch = s.machine->launch_kernel(
      std::move(spec), [fn, arg](ldmsim::Core& core) { ldmsim::athread::run_slave(core, fn, arg); });
  control.spawned = true;
  s.in_flight = &control;
  return 0;
}

}  // namespace ldmsim::athread

extern "C" {

int athread_join(void) {
  auto& s = session();
  std::string trap;
  std::string name;
  {
    const std::lock_guard lock(s.mutex);
    auto& control = ldmsim::athread::control_core(s, "athread_join");
    if (!control.spawned) return 0;
    control.spawned = false;
    if (s.in_flight == &control) ldmsim::athread::finish_in_flight(s);
    if (s.mpi) {
      // The control core waited for its launch: its clock moves to the end of the groups the launch ran on.
      const int groups = control.spawned_all_groups ? static_cast<int>(s.machine->arch().core_groups) : 1;
      for (int g = 0; g < groups; ++g) {
        control.clock = std::max(control.clock, s.machine->group_clock(control.spawned_all_groups ? g : control.group));
      }
    }
    trap.swap(control.trap);
    name = control.spawned_name;
  }
  if (!trap.empty()) {
    std::fprintf(stderr, "ldmsim athread: %s trapped: %s\n", name.c_str(), trap.c_str());
    s.trap_exit = true;
    std::exit(3);
  }
  return 0;
}

int athread_halt(void) {
  auto& s = session();
  athread_join();
  bool written = true;
  {
    const std::lock_guard lock(s.mutex);
    // With athread calls from several host threads the results are written once, at exit: which thread halts last
    // depends on host timing.
    // An MPI program's are written at MPI_Finalize (later MPI calls count), unless that has passed already.
    const bool mpi_waits = s.mpi && !s.mpi->finalized;
    if (ldmsim::athread::host_thread_index() == 0 && !s.created_threads_used && !mpi_waits) {
      written = ldmsim::athread::write_outputs(s, "athread_halt");
    }
  }
  if (!written) std::exit(2);  // the summary line said why (outside the lock: exit runs the handler that takes it)
  return 0;
}

int athread_get_max_threads(void) {
  auto& s = session();
  if (!s.machine) return 64;
  return static_cast<int>(s.machine->arch().cores_per_group());
}

int athread_set_num_threads(int n) {
  if (n <= 0 || n > athread_get_max_threads()) return -1;
  session().num_threads = n == athread_get_max_threads() ? 0 : n;
  return 0;
}

unsigned long athread_host_cycles(void) {
  auto& s = session();
  const std::lock_guard lock(s.mutex);
  if (!s.machine) return 0;
  // A spawn in flight runs to its end first: a value read mid-launch would depend on host timing.
  if (s.in_flight != nullptr) ldmsim::athread::finish_in_flight(s);
  ldmsim::Cycle cycles = s.machine->stats().cycles;
  if (s.mpi) cycles = std::max(cycles, ldmsim::athread::control_core(s, "athread_host_cycles").clock);
  return cycles;
}

}  // extern "C"
