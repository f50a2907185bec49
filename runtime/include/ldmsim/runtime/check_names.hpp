// Names of ldm bytes and code in checking reports (docs/checking.md "Names"): code that knows what the program calls
// its local-store arrays (the athread layer: __thread_local symbols, ldm_malloc'ed blocks) and where its DMA calls
// are (source lines) names them in the reports.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

class Machine;
class CoreCheck;

/// Names what holds ldm offset `offset` of core `core` of node core group `cg` ("'buf' (__thread_local, byte 8 of
/// 1024)"); empty: nothing known. Called while reporting, on the host thread running that group.
using LdmNamer = std::function<std::string(int cg, int core, LdmAddr offset)>;

/// Names ldm bytes in the machine's later reports.
void set_check_ldm_namer(Machine& machine, LdmNamer namer);

/// The code issuing the core's next DMA request: reports describing that request name it ("issued at cycle 10 by
/// slave code in f at f.c:12", `where(site)`), and DMA races between different code are different reports.
void set_issue_site(CoreCheck& check, std::uint64_t site, std::string (*where)(std::uint64_t site));

}  // namespace ldmsim
