// Lint sites: counting warnings per site on the groups' threads, merging the groups' tables for the control core.
#include "ldmsim/runtime/lint_sites.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "ldmsim/runtime/core.hpp"
#include "ldmsim/runtime/machine.hpp"
#include "lint_state.hpp"

namespace ldmsim {
namespace detail {

bool LintGroup::add(LintSite site, std::uint64_t code_site) {
  const std::string key = fmt::format("{}|{}|{}|{:x}", site.kernel, site.api, site.field, code_site);
  auto [it, fresh] = sites.try_emplace(key, std::move(site));
  if (!fresh) ++it->second.count;  // a group's warnings come in its cores' simulated-time order: the first is kept
  return fresh;
}

}  // namespace detail

void set_lint_code_site(Core& core, std::uint64_t site, LintSiteText where, const void* context) {
  auto& sites = core.group_state<detail::LintCodeSites>().by_core;
  if (site == 0) {
    sites.erase(&core);
  } else {
    sites[&core] = {site, where, context};
  }
}

std::vector<LintSite> lint_sites(const Machine& machine) {
  std::vector<LintSite> out;
  const auto* state = machine.find_host_state<detail::LintState>();
  if (state == nullptr) return out;
  std::map<std::string, LintSite> merged;  // the same site in several groups: counts add up, the earliest speaks
  for (const auto& [cg, group] : state->groups) {
    for (const auto& [key, site] : group.sites) {
      auto [it, fresh] = merged.try_emplace(key, site);
      if (fresh) continue;
      LintSite& m = it->second;
      const std::uint64_t count = m.count + site.count;
      if (std::tie(site.cycle, site.cg, site.core) < std::tie(m.cycle, m.cg, m.core)) m = site;
      m.count = count;
    }
  }
  for (auto& [key, site] : merged) out.push_back(std::move(site));
  std::sort(out.begin(), out.end(), [](const LintSite& a, const LintSite& b) {
    return std::tie(a.cycle, a.cg, a.core, a.kernel, a.api, a.field) <
           std::tie(b.cycle, b.cg, b.core, b.kernel, b.api, b.field);
  });
  return out;
}

std::string format_lint_site(const LintSite& site) {
  return fmt::format("lint ({} time{}): kernel {}, core group {}, core {}, cycle {}: {}", site.count,
                     site.count == 1 ? "" : "s", site.kernel, site.cg, site.core, site.cycle, site.message);
}

nlohmann::json lint_sites_json(const std::vector<LintSite>& sites) {
  nlohmann::json out = nlohmann::json::array();
  for (const LintSite& s : sites) {
    out.push_back({{"kernel", s.kernel},
                   {"api", s.api},
                   {"field", s.field},
                   {"cg", s.cg},
                   {"core", s.core},
                   {"cycle", s.cycle},
                   {"count", s.count},
                   {"message", s.message}});
  }
  return out;
}

}  // namespace ldmsim
