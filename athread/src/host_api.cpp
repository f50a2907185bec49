// The control-core half of the athread API: athread_init / spawn / join / halt on an ldmsim::Machine, and
// the registration of the __thread_local section by the program's anchor object.
#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "athread.h"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/output_file.hpp"
#include "session.hpp"
#include "slave_context.hpp"

namespace ldmsim::athread {

Session& session() {
  static Session instance;
  return instance;
}

/// Launches fn(arg) on core group 0, or on every core group; `name` names the kernel.
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

/// The session's results: the trace named by LDMSIM_TRACE and a summary line on stderr. Once per session,
/// at athread_halt or, for a program that never calls it, at exit. False when the trace could not be written.
bool write_outputs(Session& s, const char* when) {
  if (!s.machine || s.outputs_written) return true;
  bool written = true;
  s.outputs_written = true;
  const auto stats = s.machine->stats();
  std::string trace_note;
  if (const char* trace = std::getenv("LDMSIM_TRACE"); trace != nullptr && *trace != '\0') {
    try {
      s.machine->write_trace(trace, {{"program", "athread"}});
      trace_note = std::string(", trace ") + trace;
    } catch (const std::exception& e) {
      trace_note = std::string(", trace not written: ") + e.what();
      written = false;
    }
  }
  const std::string groups =
      s.all_groups_used ? fmt::format("the slowest of {} core groups", s.machine->arch().core_groups) : "core group 0";
  std::fprintf(stderr, "ldmsim athread: %llu simulated cycles on %s%s (%s)\n",
               static_cast<unsigned long long>(stats.cycles), groups.c_str(), trace_note.c_str(), when);
  return written;
}

void write_outputs_at_exit() {
  Session& s = session();
  if (s.active != nullptr) return;  // exit() called by slave code, on the launch's own thread: nothing to join
  bool trapped = false;
  if (s.spawned) {  // finish the launch so that its cycles and DMA are in the results (exit() may not be called here)
    s.spawned = false;
    try {
      s.launch.join();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ldmsim athread: %s trapped: %s\n", s.spawned_name.c_str(), e.what());
      trapped = true;
    }
  }
  const bool written = write_outputs(s, "at exit, athread_halt was not called");
  if (trapped) std::_Exit(3);   // a trap is exit status 3, as at athread_join
  if (!written) std::_Exit(2);  // the trace asked for is missing: an output that cannot be written is bad input
}
}  // namespace

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
  if (s.machine) return 0;
  try {
    ldmsim::MachineOptions options;
    options.threads = 1;  // every core group on one host thread: the __thread_local section is swapped per core
    const char* trace = std::getenv("LDMSIM_TRACE");
    options.trace = trace != nullptr && *trace != '\0';  // empty: as unset
    if (options.trace) {
      // Refused before anything runs, as `ldmsim run` refuses its outputs: a directory, device or FIFO.
      ldmsim::check_output_target(trace, "trace file (LDMSIM_TRACE)");
    }
    const std::string alignment = ldmsim::athread::env_or("LDMSIM_ALIGNMENT", "trap");
    if (alignment != "trap" && alignment != "lint") {
      throw std::invalid_argument("LDMSIM_ALIGNMENT=" + alignment + " is neither trap nor lint");
    }
    if (alignment == "lint") options.alignment = ldmsim::AlignmentPolicy::kLint;
    s.machine = std::make_unique<ldmsim::Machine>(
        ldmsim::Arch::resolve(ldmsim::athread::env_or("LDMSIM_ARCH", "sw26010")), options);
    // Unset: no fixed size, the stack takes the ldm that ldm_malloc has not (slave_context.cpp).
    s.stack_bytes = ldmsim::athread::parse_stack_bytes(ldmsim::athread::env_or("LDMSIM_ATHREAD_STACK_BYTES", "0"));
  } catch (const std::exception& e) {
    ldmsim::athread::fail(e.what(), 2);
  }
  s.outputs_written = false;
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
  return 0;
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
  const char* api = all_groups ? "athread_spawn_cgs" : "athread_spawn";
  if (!s.machine) fail((std::string(api) + " before athread_init").c_str(), 2);
  if (s.spawned) fail((std::string(api) + " while the previous spawn was not joined (call athread_join)").c_str(), 2);
  s.mirror.refresh(s.machine->memory());
  s.rma_pending.clear();
  s.rma_pending_count = 0;
  ldmsim::LaunchSpec spec;
  if (!all_groups) spec.groups = {0};  // empty: every core group
  s.all_groups_used = s.all_groups_used || all_groups;
  spec.name = std::string("slave_") + name;
  spec.node_sync = true;  // the groups of a spawn run together, so athread_ssync_node can join them
  s.spawned_name = spec.name;
  s.launch = s.machine->launch_kernel(std::move(spec),
                                      [fn, arg](ldmsim::Core& core) { ldmsim::athread::run_slave(core, fn, arg); });
  s.spawned = true;
  return 0;
}

}  // namespace ldmsim::athread

extern "C" {

int athread_join(void) {
  auto& s = session();
  if (!s.spawned) return 0;
  s.spawned = false;
  try {
    s.launch.join();
  } catch (const ldmsim::Fault& f) {
    std::fprintf(stderr, "ldmsim athread: %s trapped: %s\n", s.spawned_name.c_str(), f.what());
    std::exit(3);
  }
  if (!s.tl_initial.empty()) std::copy(s.tl_initial.begin(), s.tl_initial.end(), s.tl_begin);
  return 0;
}

int athread_halt(void) {
  auto& s = session();
  athread_join();
  if (!ldmsim::athread::write_outputs(s, "athread_halt")) std::exit(2);  // the summary line said why
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
  if (!s.machine) return 0;
  return s.machine->stats().cycles;
}

}  // extern "C"
