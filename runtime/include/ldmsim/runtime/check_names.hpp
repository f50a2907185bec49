// Names of ldm bytes in checking reports (docs/checking.md "Names"): code that knows what the program calls its
// local-store arrays (the athread layer: __thread_local symbols, ldm_malloc'ed blocks) names them in the reports.
#pragma once

#include <functional>
#include <string>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

class Machine;

/// Names what holds ldm offset `offset` of core `core` of node core group `cg` ("'buf' (__thread_local, byte 8 of
/// 1024)"); empty: nothing known. Called while reporting, on the host thread running that group.
using LdmNamer = std::function<std::string(int cg, int core, LdmAddr offset)>;

/// Names ldm bytes in the machine's later reports.
void set_check_ldm_namer(Machine& machine, LdmNamer namer);

}  // namespace ldmsim
