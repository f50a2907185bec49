// Checking mode's public side: parsing the check list, enabling it on a machine, merging the groups' reports.
#include "ldmsim/runtime/check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "check_state.hpp"
#include "ldmsim/runtime/check_names.hpp"
#include "ldmsim/runtime/machine.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

CheckSet parse_check_set(std::string_view text, std::string_view source) {
  CheckSet set;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view word = text.substr(at, comma - at);
    if (word == "all") {
      set = {true, true, true};
    } else if (word == "races") {
      set.races = true;
    } else if (word == "init") {
      set.init = true;
    } else if (word == "bounds") {
      set.bounds = true;
    } else if (word == "off" || (word.empty() && text.empty())) {
      // nothing
    } else {
      throw ConfigError(
          fmt::format("{}: '{}' is not a check; use a comma-separated list of races, init, bounds, "
                      "or all / off",
                      source, word));
    }
    at = comma + 1;
  }
  return set;
}

std::string to_string(const CheckSet& checks) {
  std::string out;
  for (auto [on, name] : {std::pair{checks.races, "races"}, {checks.init, "init"}, {checks.bounds, "bounds"}}) {
    if (!on) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out.empty() ? "off" : out;
}

void enable_checks(Machine& machine, CheckSet checks) {
  auto& state = machine.host_state<detail::CheckState>();
  state.checks = checks;
  state.groups.clear();
  if (!checks.init) state.device.forget_all();  // allocations made while it is off count as written
}

void set_launch_control(Machine& machine, std::uint32_t control, std::string label) {
  if (!enabled_checks(machine).races) return;
  machine.host_state<detail::CheckState>().control = detail::CheckState::Control{control, std::move(label)};
}

void set_check_buffer_namer(Machine& machine, BufferNamer namer) {
  machine.host_state<detail::CheckState>().namer = std::move(namer);
}

void set_check_ldm_namer(Machine& machine, LdmNamer namer) {
  machine.host_state<detail::CheckState>().ldm_namer = std::move(namer);
}

void mark_device_defined(Machine& machine, DeviceAddr addr, std::uint64_t bytes) {
  if (!enabled_checks(machine).init) return;
  machine.host_state<detail::CheckState>().device.mark(addr, addr + bytes);
}

CheckSet enabled_checks(const Machine& machine) {
  const auto* state = machine.find_host_state<detail::CheckState>();
  return state != nullptr ? state->checks : CheckSet{};
}

std::vector<CheckReport> check_reports(const Machine& machine) {
  std::vector<CheckReport> out;
  const auto* state = machine.find_host_state<detail::CheckState>();
  if (state == nullptr) return out;
  // The same site in several groups is one report: counts add up, the earliest occurrence speaks for it.
  std::map<std::string, CheckReport> merged;
  for (const auto& [cg, group] : state->groups) {
    for (const auto& [key, site] : group->sites()) {
      auto [it, fresh] = merged.try_emplace(key, site.first);
      if (fresh) continue;
      CheckReport& r = it->second;
      const CheckReport& s = site.first;
      r.count += s.count;
      if (std::tie(s.cycle, s.cg, s.core) < std::tie(r.cycle, r.cg, r.core)) {
        const std::uint64_t count = r.count;
        r = s;
        r.count = count;
      }
    }
  }
  for (auto& [key, r] : merged) out.push_back(std::move(r));
  std::sort(out.begin(), out.end(), [](const CheckReport& a, const CheckReport& b) {
    return std::tie(a.cycle, a.cg, a.core, a.kind, a.message) < std::tie(b.cycle, b.cg, b.core, b.kind, b.message);
  });
  return out;
}

void clear_check_reports(Machine& machine) {
  auto* state = machine.find_host_state<detail::CheckState>();
  if (state == nullptr) return;
  for (auto& [cg, group] : state->groups) group->clear_reports();
}

std::string format_check_report(const CheckReport& report) {
  return fmt::format("check {} ({} time{}): kernel {}, core group {}, core {}, cycle {}: {}", report.kind, report.count,
                     report.count == 1 ? "" : "s", report.kernel, report.cg, report.core, report.cycle, report.message);
}

nlohmann::json check_reports_json(const std::vector<CheckReport>& reports) {
  nlohmann::json out = nlohmann::json::array();
  for (const CheckReport& r : reports) {
    out.push_back({{"kind", r.kind},
                   {"kernel", r.kernel},
                   {"cg", r.cg},
                   {"core", r.core},
                   {"cycle", r.cycle},
                   {"count", r.count},
                   {"message", r.message}});
  }
  return out;
}

void set_issue_site(CoreCheck& check, std::uint64_t site, std::string (*where)(std::uint64_t site)) {
  static_cast<detail::CoreCheckImpl&>(check).set_issue_site(site, where);  // the one implementation
}

CoreCheck* core_check(Core& core) {
  const detail::CheckState* state = core.group_state<detail::CheckLink>().state;
  if (state == nullptr) return nullptr;
  const auto it = state->groups.find(core.node_cg());
  return it == state->groups.end() ? nullptr : &it->second->core(core.id());
}

}  // namespace ldmsim
