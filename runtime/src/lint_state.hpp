// The machine's lint sites (lint_sites.hpp), one table per node core group, each touched only by the host thread
// running its group; the tables are made on the control core before a launch starts.
#pragma once

#include <map>
#include <string>
#include <unordered_map>

#include "ldmsim/runtime/lint_sites.hpp"

namespace ldmsim::detail {

/// One core group's sites, by key (kernel, call, field).
struct LintGroup {
  std::unordered_map<std::string, LintSite> sites;
  /// Counts a warning; true when it is the site's first (the caller logs only those in full).
  bool add(LintSite site);
};

/// The machine's lint tables (a HostState of its control core, shared with its views).
struct LintState {
  std::map<int, LintGroup> groups;  // by node core group
};

}  // namespace ldmsim::detail
