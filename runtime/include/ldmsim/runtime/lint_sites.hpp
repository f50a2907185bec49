// Lint warnings grouped by site: a bad request in a loop that every core runs is one site with a count, not one
// warning per request (the trace still marks every request). A site is the kernel, the call and the first bad
// field; each keeps its first occurrence (earliest cycle, then core group, then core).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

class Machine;

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

}  // namespace ldmsim
