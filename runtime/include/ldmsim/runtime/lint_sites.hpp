// Lint warnings grouped by site: a bad request in a loop that every core runs is one site with a count, not one
// warning per request (the trace still marks every request). A site is the kernel, the call and the first bad
// field (and, for code that names it, the code site); each keeps its first occurrence (earliest cycle, then core
// group, then core).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

class Machine;
class Core;

/// One lint site.
struct LintSite {
  std::string kernel;
  std::string api;    ///< the call (Core::get, athread_get, simd_load, ...)
  std::string field;  ///< the first bad field of a DMA request; empty for other warnings
  int cg = 0;         ///< node core group of the first occurrence
  int core = 0;
  Cycle cycle = 0;
  std::uint64_t count = 1;
  std::string message;  ///< the first occurrence's warning (every bad field, with its fix)
};

/// The machine's lint sites since it was made (or reset), in order of first occurrence: the same for any thread count.
std::vector<LintSite> lint_sites(const Machine& machine);
/// "lint (N times): kernel K, core group G, core C, cycle X: MESSAGE".
std::string format_lint_site(const LintSite& site);
/// The sites as stats.json's `lint` array.
nlohmann::json lint_sites_json(const std::vector<LintSite>& sites);

/// Describes a code site for a warning ("slave code in f at f.c:12"); called only when a warning is recorded.
using LintSiteText = std::string (*)(std::uint64_t site);

/// The code on whose behalf `core` makes its next requests and warnings (the athread layer: the program's call):
/// its warnings are sites of their own per code site, and their message (also the trace marker's) ends with
/// "[called from WHERE]". `site` 0 forgets it. Call on the core's own fiber.
void set_lint_code_site(Core& core, std::uint64_t site, LintSiteText where);

}  // namespace ldmsim
