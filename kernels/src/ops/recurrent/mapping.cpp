// EP/VP: the candidate mappings of W(n) onto a core group and the greedy search over ep, each candidate timed by
// simulating the step kernel on a private machine of the same arch (no data: the kernel's timing does not depend
// on values, so the trial machine's DMA carries no bytes and the trials compute no products). Cycles per step = cycles
// of 2 steps - cycles of 1 step, so loading resident weights and the first publication do not count.
#include "mapping.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <tuple>

#include "../op_support.hpp"
#include "../per_arch.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim::ops::recurrent {

namespace {

std::size_t ceil_div(std::size_t a, std::size_t b) {
  return (a + b - 1) / b;
}

/// ldm bytes a core of `m` needs (weights resident or two one-row chunks), with 64 bytes of alignment slack per
/// buffer; mirrors StepRunner's allocations.
std::uint64_t ldm_needed(const CellShape& s, const RecurrentMapping& m, std::size_t bs, bool resident) {
  const std::uint64_t rows = 4 * m.units_per_core, units = m.units_per_core, cols = m.column_block;
  std::uint64_t bytes = 16 * 64;
  bytes += (s.two_pass() ? 3 : 2) * rows * bs * 4 + (m.ep > 1 ? rows * bs * 4 : 0);  // accumulators
  bytes += std::max(cols, units) * bs * 4 + cols * bs * 2 + cols * bs * 4;           // vector, x and h reads
  bytes += rows * 4 + 3 * units * bs * 4 + (units + 1) * bs * 2 + (units + 4) * 2;   // owner: bias, state, Y
  bytes += resident ? rows * cols * 2 : 2 * cols * 2;
  return bytes;
}

}  // namespace

RecurrentMapping make_mapping(const Arch& arch, const CellShape& s, std::size_t bs, std::size_t ep,
                              std::size_t groups) {
  const std::size_t cores = arch.cores_per_group(), columns = padded_columns(s);
  RecurrentMapping m;
  m.groups = std::max<std::size_t>(groups, 1);
  m.units_per_group = ceil_div(s.hidden, m.groups);
  if (s.hidden > 1) m.units_per_group = tiling::ceil_even(m.units_per_group);  // Y puts start on even elements
  m.column_block = tiling::ceil_even(ceil_div(columns, std::clamp<std::size_t>(ep, 1, cores)));
  m.ep = ceil_div(columns, m.column_block);  // no partition without columns
  m.cores_per_part = cores / m.ep;
  m.units_per_core = ceil_div(m.units_per_group, m.cores_per_part);
  if (s.hidden > 1) m.units_per_core = tiling::ceil_even(m.units_per_core);
  m.active_cores = ceil_div(m.units_per_group, m.units_per_core);
  const std::size_t lanes = arch.compute.unit(DataType::kF32).simd_lanes;
  const std::size_t groups_with_units = ceil_div(s.hidden, m.units_per_group);
  m.vp =
      std::min(4 * s.hidden, groups_with_units * m.active_cores * std::min<std::size_t>(lanes, 4 * m.units_per_core));
  m.resident = ldm_needed(s, m, bs, true) <= arch.ldm_bytes;
  if (!m.resident && ldm_needed(s, m, bs, false) > arch.ldm_bytes) {
    throw ConfigError(fmt::format(
        "{}: a core's share at ep {} (batch slice {}, {} hidden units, {} columns) needs {} bytes of ldm, more than "
        "the {} the arch has",
        s.kind == CellKind::kLstm ? "lstm" : "gru", m.ep, bs, m.units_per_core, m.column_block,
        ldm_needed(s, m, bs, false), arch.ldm_bytes));
  }
  return m;
}

std::vector<std::size_t> ep_candidates(const Arch& arch, const CellShape& s) {
  std::vector<std::size_t> out;
  const std::size_t cores = arch.cores_per_group(), columns = padded_columns(s);
  for (std::size_t ep = 1; ep <= cores && ep <= columns / 2; ep *= 2) out.push_back(ep);
  if (out.empty()) out.push_back(1);
  return out;
}

double simulated_cycles_per_step(Machine& trial, const CellShape& shape, std::size_t bs, const RecurrentMapping& m) {
  DeviceScratch scratch(trial);  // freed on the way out: the next candidate reuses the (already touched) memory
  CellShape s = shape;
  s.dirs = 1;
  s.reverse_first = false;
  s.batch = bs;
  const GateMatrixLayout gl = s.gate_layout();
  const PaddingSpec spec{PaddingClass::kTwoD, Unit::kSample, Unit::kSample, true};
  const auto matrix = [&](std::size_t rows, std::size_t cols) {
    TensorRef t;
    t.layout = choose_plan(Shape4{.n = rows, .c = cols, .rank = 2}, spec, StagingPolicy::kMethod).layout;
    t.ptr = scratch.alloc<f16>(t.layout.total);
    return t;
  };
  constexpr std::size_t kSteps = 2;
  StepArgs args;
  args.timing_only = true;
  args.shape = s;
  args.mapping = m;
  args.gate_matrix = {scratch.alloc<f16>(gl.elements())};
  args.gate_bias = {scratch.alloc<float>(gl.rows())};
  args.x = matrix(kSteps * bs, s.input);
  args.y = matrix(kSteps * bs, s.hidden);
  args.y_h = matrix(bs, s.hidden);
  if (s.kind == CellKind::kLstm) args.y_c = matrix(bs, s.hidden);
  args.tasks = {StepTask{.group = 0, .groups = static_cast<int>(m.groups), .dir = 0, .b0 = 0, .b1 = bs}};
  allocate_scratch(trial, scratch, s, m, args.tasks, "trial");
  const auto cycles_of = [&](std::size_t steps) {
    args.shape.seq = steps;
    // The trial's groups start at the latest clock: a group the trials have not used yet would otherwise start in
    // the past, and its work (the weight load) would not count where it should.
    std::vector<int> groups(m.groups);
    std::iota(groups.begin(), groups.end(), 0);
    const Cycle before = trial.stats().cycles;
    trial.start_no_earlier(groups, before);
    run_steps(trial, args, "trial");
    return static_cast<double>(trial.stats().cycles - before);
  };
  const double one = cycles_of(1);
  return (cycles_of(kSteps) - one) / static_cast<double>(kSteps - 1);
}

namespace {

/// The ep search for `groups` groups per task, appending its candidates; the index of its best, or none when no
/// mapping fits. Greedy from ep = 1 while the cycles fall; with `near` (the best ep of another number of groups),
/// only near / 2, near and 2 * near, which is where the minimum moves to (the search costs a simulation each).
std::optional<std::size_t> search_ep(Machine& trial, const CellShape& s, std::size_t groups, std::size_t forced_ep,
                                     std::size_t near, MappingChoice& choice) {
  const Arch& arch = trial.arch();
  const std::size_t bs = widest_slice(plan_tasks(s, static_cast<int>(arch.core_groups), static_cast<int>(groups)));
  std::vector<std::size_t> eps = forced_ep != 0 ? std::vector<std::size_t>{forced_ep} : ep_candidates(arch, s);
  if (forced_ep == 0 && near != 0) {
    std::erase_if(eps, [near](std::size_t ep) { return ep != near / 2 && ep != near && ep != 2 * near; });
  }
  std::optional<std::size_t> best;
  for (const std::size_t ep : eps) {
    RecurrentMapping m;
    try {
      m = make_mapping(arch, s, bs, ep, groups);
    } catch (const ConfigError&) {
      // Small ep need long vectors per core, large ep many units: skip the first, stop at the second.
      if (forced_ep != 0) throw;
      if (!best) continue;
      break;
    }
    if (best && m.ep == choice.candidates[*best].mapping.ep) break;  // no more columns to split
    choice.candidates.push_back({m, simulated_cycles_per_step(trial, s, bs, m)});
    const std::size_t at = choice.candidates.size() - 1;
    if (best && choice.candidates[at].cycles_per_step >= choice.candidates[*best].cycles_per_step) {
      if (near == 0) break;  // past the U
      continue;
    }
    best = at;
  }
  return best;
}

}  // namespace

void check_forced_mapping(const Arch& arch, const CellShape& s, std::size_t forced_ep, std::size_t forced_groups) {
  const char* op = s.kind == CellKind::kLstm ? "lstm" : "gru";
  const std::size_t most = std::max<std::size_t>(1, arch.core_groups / s.dirs);
  if (forced_groups > most) {
    throw ConfigError(fmt::format("{}: groups {} is more than the {} core groups a direction can have on {}", op,
                                  forced_groups, most, arch.name));
  }
  if (forced_ep > arch.cores_per_group()) {
    throw ConfigError(
        fmt::format("{}: ep {} is more than the {} cores of a core group on {} (ep parts split the cores)", op,
                    forced_ep, arch.cores_per_group(), arch.name));
  }
}

namespace {

MappingChoice search_mapping(Machine& trial, const CellShape& s, std::size_t forced_ep, std::size_t forced_groups) {
  const Arch& arch = trial.arch();
  MappingChoice choice;
  choice.npe = arch.cores_per_group() * arch.compute.unit(DataType::kF32).simd_lanes;
  // Numbers of groups per task from 1 until two in a row bring no better step, or one once the best keeps its
  // weights resident (not at the first: the cycles do not fall steadily with more groups, because the task
  // slots, hence the batch slices, change with them).
  const std::size_t most = std::max<std::size_t>(1, arch.core_groups / s.dirs);
  std::optional<std::size_t> best;
  std::optional<ConfigError> first_error;  // what a forced ep needs on the first number of groups it did not fit
  int worse_in_a_row = 0;
  for (std::size_t g = forced_groups != 0 ? forced_groups : 1; g <= (forced_groups != 0 ? forced_groups : most); ++g) {
    std::optional<std::size_t> found;
    try {
      found = search_ep(trial, s, g, forced_ep, best ? choice.candidates[*best].mapping.ep : 0, choice);
    } catch (const ConfigError& e) {
      if (forced_groups != 0) throw;
      if (!first_error) first_error = e;
      continue;
    }
    if (found && (!best || choice.candidates[*found].cycles_per_step < choice.candidates[*best].cycles_per_step)) {
      best = found;
      worse_in_a_row = 0;
    } else if (best && ++worse_in_a_row == (choice.candidates[*best].mapping.resident ? 1 : 2)) {
      // More groups mostly pay when they make streamed weights resident: once the best is resident, one number
      // of groups without a better step ends the search; before, two in a row.
      break;
    }
  }
  if (!best) {  // nothing fits: the error of the smallest mapping names what it needs
    if (first_error) throw *first_error;
    const std::size_t g = forced_groups != 0 ? forced_groups : 1;
    (void)make_mapping(arch, s, widest_slice(plan_tasks(s, static_cast<int>(arch.core_groups), static_cast<int>(g))), 1,
                       g);
    throw ConfigError("lstm/gru: no mapping fits the local store");
  }
  choice.chosen = *best;
  return choice;
}

/// The trial machine of an arch (its DMA moves no bytes: the kernel's timing ignores values) and the choices made on
/// it.
struct TrialMachine {
  explicit TrialMachine(const Arch& arch)
      : machine(arch, MachineOptions{.threads = 1, .trace = false, .move_data = false}) {}
  using Key = std::tuple<CellKind, bool, std::size_t, std::size_t, std::size_t, std::size_t, std::size_t, bool,
                         std::size_t, std::size_t>;
  Machine machine;
  std::map<Key, MappingChoice> choices;
};

/// Every arch's trial machine, searched by one control core at a time (several core groups' may run at once).
struct TrialMachines {
  std::mutex mutex;
  PerArch<TrialMachine, 2> arches;
};

}  // namespace

MappingChoice choose_mapping(Machine& machine, const CellShape& s, std::size_t forced_ep, std::size_t forced_groups) {
  check_forced_mapping(machine.arch(), s, forced_ep, forced_groups);
  TrialMachines& trials = machine.host_state<TrialMachines>();
  const std::lock_guard lock(trials.mutex);
  TrialMachine& trial = trials.arches.of(machine.arch());
  const TrialMachine::Key key{s.kind, s.linear_before_reset, s.input,   s.hidden,     s.seq, s.batch,
                              s.dirs, s.reverse_first,       forced_ep, forced_groups};
  if (const auto it = trial.choices.find(key); it != trial.choices.end()) return it->second;
  // As the trial's control core: its many small launches then need no handoff between host threads.
  MappingChoice choice;
  trial.machine.run_control([&] { choice = search_mapping(trial.machine, s, forced_ep, forced_groups); });
  trial.choices.emplace(key, choice);
  return choice;
}

}  // namespace ldmsim::ops::recurrent

namespace ldmsim {

std::vector<std::string> MappingChoice::describe() const {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const MappingCandidate& c = candidates[i];
    lines.push_back(fmt::format(
        "groups {} ep {:>3} vp {:>5} (ep*vp {} of npe {}): {:.0f} cycles/step, {} partition(s) of {} "
        "core(s) x {} unit(s), {} columns each, weights {}{}",
        c.mapping.groups, c.mapping.ep, c.mapping.vp, c.mapping.ep * c.mapping.vp, npe * c.mapping.groups,
        c.cycles_per_step, c.mapping.ep, c.mapping.active_cores, c.mapping.units_per_core, c.mapping.column_block,
        c.mapping.resident ? "resident" : "streamed", i == chosen ? "  <- chosen" : ""));
  }
  return lines;
}

}  // namespace ldmsim
