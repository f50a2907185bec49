// The program's own names for the buffers a trap or a checking report is about: the host array a host address lies
// in, and the __thread_local array or ldm_malloc'ed block an ldm offset lies in (docs/checking.md "Names").
#pragma once

#include <cstdint>
#include <string>

#include "ldmsim/sim/types.hpp"
#include "slave_context.hpp"

namespace ldmsim::athread {

/// ", byte N of host array 'NAME' (B bytes)", or empty when no listed host array holds `host`.
std::string host_array_text(std::uintptr_t host);
/// "'NAME' (__thread_local, byte N of B)" or "ldm_malloc'ed block [LO, HI)" for ldm offset `offset` of the core
/// of `ctx`; empty when neither holds it (the slave stack, free ldm).
std::string ldm_array_name(const SlaveContext& ctx, LdmAddr offset);
/// ldm_array_name of core `core` of core group `cg` when it is the core running now (an LdmNamer for checking
/// reports); empty for any other core.
std::string active_ldm_name(int cg, int core, LdmAddr offset);
/// " (NAME)" from ldm_array_name, or empty.
std::string ldm_array_text(const SlaveContext& ctx, LdmAddr offset);

}  // namespace ldmsim::athread
