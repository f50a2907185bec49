// The machine's lint sites (lint_sites.hpp), one table per node core group, each touched only by the host thread
// running its group; the tables are made on the control core before a launch starts.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "ldmsim/runtime/lint_sites.hpp"

namespace ldmsim::detail {

/// One core group's sites, by key (kernel, call, field, code site).
struct LintGroup {
  std::unordered_map<std::string, LintSite> sites;
  /// Counts a warning made at `code_site` (0: not known); true when it is the site's first (the caller logs only
  /// those in full).
  bool add(LintSite site, std::uint64_t code_site);
};

/// In each launch thread's HostState (Core::group_state): the code site each core of the thread's fibers makes its
/// requests for (set_lint_code_site), by core.
struct LintCodeSites {
  struct Site {
    std::uint64_t site = 0;
    LintSiteText where = nullptr;
    const void* context = nullptr;
  };
  std::unordered_map<const Core*, Site> by_core;
};

/// The machine's lint tables (a HostState of its control core, shared with its views).
struct LintState {
  std::map<int, LintGroup> groups;  // by node core group
};

}  // namespace ldmsim::detail
