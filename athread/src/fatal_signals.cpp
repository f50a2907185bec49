// Fatal-signal handling for athread programs (see fatal_signals.hpp). The handler formats into a fixed buffer
// and writes with write(2); the summary and the trace it then writes allocate and open files, which is not
// async-signal-safe: a crash inside malloc can hang there (documented in docs/athread.md).
#include "fatal_signals.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "slave_context.hpp"

namespace ldmsim::athread {
namespace {

constexpr std::size_t kSignalStackBytes = 1u << 20;  // the handler writes the trace: zstd and JSON need room
constexpr std::array kSignals{SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

void say(const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

/// The running compute core overflowed its fiber stack when the faulting address lies just below that stack.
bool is_stack_overflow(int sig, const siginfo_t* info, const SlaveContext* ctx) {
  if (sig != SIGSEGV || ctx == nullptr) return false;
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  const std::size_t reach = session().fiber_stack_bytes + (64u << 10);  // the guard page and some slack
  return addr < ctx->stack_top && ctx->stack_top - addr > session().fiber_stack_bytes / 2 &&
         ctx->stack_top - addr <= reach;
}

void on_fatal_signal(int sig, siginfo_t* info, void*) {
  static std::atomic_flag busy = ATOMIC_FLAG_INIT;
  if (busy.test_and_set()) {  // a second thread, or a crash in here: die of the signal
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  const SlaveContext* ctx = session().active;
  std::array<char, 1024> line{};
  if (is_stack_overflow(sig, info, ctx)) {
    const Core& core = *ctx->core;
    std::snprintf(line.data(), line.size(),
                  "ldmsim athread: trap stack-overflow: cg %d core %d in kernel '%s' at cycle %llu: the slave "
                  "function's frames overflowed the core's %zu-byte host fiber stack (deep recursion, or stack "
                  "arrays far larger than any local store)\n",
                  core.node_cg(), core.id(), core.kernel().c_str(), static_cast<unsigned long long>(core.cycle()),
                  session().fiber_stack_bytes);
    say(line.data());
    write_outputs_after_crash("stack overflow");
    _exit(3);
  }
  const char* name = sig == SIGSEGV  ? "SIGSEGV"
                     : sig == SIGBUS ? "SIGBUS"
                     : sig == SIGILL ? "SIGILL"
                     : sig == SIGFPE ? "SIGFPE"
                                     : "SIGABRT";
  if (ctx != nullptr) {
    std::snprintf(line.data(), line.size(),
                  "ldmsim athread: fatal signal %s in slave function '%s' on cg %d core %d at cycle %llu; writing "
                  "the summary and trace so far\n",
                  name, ctx->core->kernel().c_str(), ctx->core->node_cg(), ctx->core->id(),
                  static_cast<unsigned long long>(ctx->core->cycle()));
  } else {
    std::snprintf(line.data(), line.size(),
                  "ldmsim athread: fatal signal %s in control-core code; writing the summary and trace so far\n", name);
  }
  say(line.data());
  write_outputs_after_crash("crashed");
  signal(sig, SIG_DFL);  // die of the signal as without ldmsim (exit status, core dump)
  raise(sig);
}

}  // namespace

void ensure_signal_stack() {
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) == 0) return;
  void* stack =
      mmap(nullptr, kSignalStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (stack == MAP_FAILED) return;  // no alternate stack: an overflow is then a plain SIGSEGV, as before
  stack_t alt{};
  alt.ss_sp = stack;
  alt.ss_size = kSignalStackBytes;
  if (sigaltstack(&alt, nullptr) != 0) munmap(stack, kSignalStackBytes);
}

void install_fatal_signal_handlers() {
  ensure_signal_stack();
  static const bool installed = [] {
    for (int sig : kSignals) {
      struct sigaction action {};
      action.sa_sigaction = on_fatal_signal;
      action.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset(&action.sa_mask);
      sigaction(sig, &action, nullptr);
    }
    return true;
  }();
  (void)installed;
}

}  // namespace ldmsim::athread
