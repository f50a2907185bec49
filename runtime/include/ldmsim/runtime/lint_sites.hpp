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

/// Describes a warning's code site, and what else its layer knows of the call, as the text of the bracket that ends
/// the warning ("called from slave code in f at f.c:12", or "main-memory side: ...; called from ..."); `context` is
/// the one given to set_lint_code_site. Called only when a warning is recorded.
using LintSiteText = std::string (*)(std::uint64_t site, const void* context);

/// The code on whose behalf `core` makes its next requests and warnings (the athread layer: the program's call):
/// its warnings are sites of their own per code site, and their message (also the trace marker's) ends with
/// "[WHERE(site, context)]" in place of the runtime's name of the request's allocation. `site` 0 forgets it. Call on
/// the core's own fiber; `context` must live until the site is forgotten.
void set_lint_code_site(Core& core, std::uint64_t site, LintSiteText where, const void* context = nullptr);

}  // namespace ldmsim
