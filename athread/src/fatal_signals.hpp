// Fatal signals in an athread program: a compute core's fiber stack running into its guard page becomes a
// stack-overflow trap naming the kernel and the core (exit status 3); any other crash (segfault, abort, assert,
// floating-point or bus error) first writes the run's summary line and trace, then dies of the signal as before.
#pragma once

namespace ldmsim::athread {

/// Installs the handlers for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT (once per process) and an alternate signal
/// stack on the calling host thread.
void install_fatal_signal_handlers();
/// Gives the calling host thread an alternate signal stack if it has none (the handler must run when the stack
/// that overflowed is the one the signal would be delivered on).
void ensure_signal_stack();

}  // namespace ldmsim::athread
