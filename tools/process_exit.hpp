// The CLI's exit without teardown. A run's session (its machines: hundreds of fiber stacks with guard pages, kept
// fibers, launch threads, device memory) takes 5-25 ms to destroy, a tenth of a small model's whole run, and the
// process's exit reclaims all of it at once. Commands hand such objects to keep_until_exit; main ends through
// exit_without_teardown once every output is written.
#pragma once

#include <memory>

namespace ldmsim::cli {

/// Keeps `object` alive until the process exits, where it is not destroyed (unless exit_without_teardown is built
/// to tear down: with LDMSIM_CLI_TEARDOWN, as the debug and ubsan presets are, or under a sanitizer, so that leak
/// checks and destructors still run).
void keep_until_exit(std::shared_ptr<const void> object);

/// Flushes stdout, stderr and every logger, then ends the process with `code` without running destructors (files
/// the commands wrote are closed and renamed by then; the trace spill files are unlinked from their creation).
[[noreturn]] void exit_without_teardown(int code);

}  // namespace ldmsim::cli
