// The cost-aware choice's search (placement_choice.hpp, docs/splitting.md "The cost-aware choice"): a dynamic
// programme over the ops in schedule order whose state is the placement of the op just run. An op's cost under a
// placement is its own estimate plus the exchanges its data inputs need from where their producers left them; the
// producer of an input is the previous op (the state) or an earlier one, whose placement is read off the best path
// into that state. On a chain this is exact; on a graph with branches it is the best plan among those that
// agree with the chain's optimum at every earlier op the path fixes (the Viterbi recursion with path costs), which
// a refinement then improves op by op until no single op's move lowers the plan's estimate.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <thread>

#include "ldmsim/graph/placement_choice.hpp"
#include "ldmsim/graph/plan.hpp"
#include "ldmsim/graph/tags.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/logging.hpp"

namespace ldmsim {

namespace {

/// One placement an op can take.
struct Candidate {
  std::optional<OpSplit> split;  ///< nullopt: whole
  std::string label = "whole";
  Estimate own;                                                 ///< the op's own estimate
  std::vector<std::vector<std::optional<TensorRegion>>> needs;  ///< per input, per group
  std::vector<TensorHolding> holds;                             ///< per output
};

/// A range over the whole axis is the whole tensor (as the executor binds pieces).
TensorRegion normalized(const Graph& graph, std::size_t t, TensorRegion r) {
  if (!r.whole && r.begin == 0 && r.end == graph.tensor(t).shape[r.axis]) return TensorRegion{};
  return r;
}

Candidate whole_candidate(const Graph& graph, const OpNode& op, const PlacementCostModel& model, std::size_t groups) {
  Candidate c;
  c.own = model.whole(graph, op);
  c.needs.assign(op.inputs.size(), std::vector<std::optional<TensorRegion>>(groups));
  for (auto& need : c.needs) need[0] = TensorRegion{};
  c.holds.assign(op.outputs.size(), TensorHolding{});
  return c;
}

Candidate split_candidate(const Graph& graph, const OpNode& op, OpSplit s, const PlacementCostModel& model,
                          std::size_t groups) {
  Candidate c;
  c.own = model.split(graph, op, s);
  c.needs.assign(op.inputs.size(), std::vector<std::optional<TensorRegion>>(groups));
  c.holds.assign(op.outputs.size(), TensorHolding{});
  // An attention kernel's pieces write their heads' Y into one tensor in group 0's memory: held whole.
  // A split written into one whole output (rows_into_one) likewise.
  const bool shared_outputs = s.axis.rule == kHeadsRule || s.whole_output;
  for (TensorHolding& h : c.holds) {
    if (!s.axis.reduces && !shared_outputs) h = TensorHolding{false, std::vector<std::optional<TensorRegion>>(groups)};
  }
  PieceWork w;  // each group's block in turn
  for (std::size_t g = 0; g < groups; ++g) {
    const auto [begin, end] = s.blocks[g];
    if (begin == end) continue;
    piece_regions(graph, op, s.axis, begin, end, w);
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      if (!w.dropped[k]) c.needs[k][g] = normalized(graph, op.inputs[k], w.regions[k]);
    }
    for (std::size_t k = 0; k < op.outputs.size() && !shared_outputs; ++k) {
      if (!c.holds[k].whole) c.holds[k].groups[g] = normalized(graph, op.outputs[k], w.regions[op.inputs.size() + k]);
    }
  }
  c.split = std::move(s);
  return c;
}

/// Every placement of `op`: whole, and each splittable dimension the rule can cut (once per distinct cut).
/// True when the staging lays out op `op`'s tensor `index` (its inputs, then its outputs) densely, in C order with
/// padding at the tail only: what reading or writing boxes of a whole copy needs (SplitPlacement refuses others).
/// Without layouts (a plan priced on its own), assumed so.
bool dense_layouts(const ExecutionPlan* layouts, std::size_t op, std::size_t index) {
  if (layouts == nullptr || op >= layouts->op_plans.size() || index >= layouts->op_plans[op].size()) return true;
  return layouts->op_plans[op][index].layout.only_tail_padded();
}

/// Each op's placements. `boxes`: pieces may write into one whole output (rows_into_one), which the executor does
/// only where the staging gives dense layouts.
std::vector<Candidate> candidates(const Graph& graph, const OpNode& op, const SplitPlan& plan, const Arch& arch,
                                  const PlacementCostModel& model, bool boxes) {
  const std::size_t groups = plan.memories;
  std::vector<Candidate> out{whole_candidate(graph, op, model, groups)};
  for (const SplitAxis& axis : split_axes(graph, op)) {
    if (axis.extent < 2) continue;
    std::optional<OpSplit> s = split_along(graph, op, axis, plan, arch, PieceRegions::kLater);
    if (!s) continue;
    const bool seen = std::any_of(out.begin(), out.end(), [&](const Candidate& c) {
      return c.split && c.split->axis.operand == axis.operand && c.split->axis.axis == axis.axis &&
             c.split->axis.rule == axis.rule;
    });
    if (seen) continue;
    Candidate c = split_candidate(graph, op, std::move(*s), model, groups);
    if (!std::isfinite(c.own.cycles)) continue;  // a split whose pieces cannot run
    const auto of_rule = [&](const Candidate& o) {
      return o.split && o.split->axis.rule == axis.rule && !o.split->whole_output;
    };
    const auto same_rule = static_cast<std::size_t>(std::count_if(out.begin(), out.end(), of_rule));
    c.label = same_rule == 0 ? axis.rule : fmt::format("{} (axis {})", axis.rule, axis.axis);
    if (same_rule == 1) {  // name the first one's axis too, now that there are two
      for (Candidate& o : out) {
        if (of_rule(o)) o.label = fmt::format("{} (axis {})", axis.rule, o.split->axis.axis);
      }
    }
    std::optional<OpSplit> into_one = boxes ? rows_into_one(graph, op, *c.split) : std::nullopt;
    const std::string label = c.label;
    out.push_back(std::move(c));
    if (into_one) {
      Candidate one = split_candidate(graph, op, std::move(*into_one), model, groups);
      one.label = label + " into one";
      if (std::isfinite(one.own.cycles)) out.push_back(std::move(one));
    }
  }
  // Whole on one group, its tensors in that group's memory: no remote reads, a group's cores.
  if (!op.bound->reinterprets_input()) {
    for (std::size_t g = 0; g < groups; ++g) {
      Candidate c = split_candidate(graph, op, one_group(op, plan, static_cast<int>(g)), model, groups);
      c.label = fmt::format("whole on cg{}", g);
      out.push_back(std::move(c));
    }
  }
  return out;
}

/// Every op's candidates, priced on up to `threads` host threads at once. A cost model's memos and a kernel search's
/// tables serve one thread at a time, so on several threads each prices with its own, looking a job up in `kernels`
/// before searching it and leaving the result there (KernelEstimates::for_another_thread). What a candidate is priced
/// at depends neither on the thread nor on what was priced before it, so the plan is the same on any number of
/// threads; an op that throws throws as it would alone (the first such op in schedule order).
std::vector<std::vector<Candidate>> all_candidates(const Graph& graph, const SplitPlan& plan, const Arch& arch,
                                                   const ExecutionPlan* layouts, const PlacementCostModel& model,
                                                   const std::shared_ptr<KernelEstimates>& kernels, unsigned threads) {
  const auto& ops = graph.ops();
  const std::size_t n = ops.size();
  std::vector<std::vector<Candidate>> cands(n);
  const auto price = [&](std::size_t i, const PlacementCostModel& with) {
    cands[i] = candidates(graph, ops[i], plan, arch, with, dense_layouts(layouts, i, ops[i].inputs.size()));
  };
  const std::size_t workers = std::min<std::size_t>(threads, n);
  if (workers < 2) {
    for (std::size_t i = 0; i < n; ++i) price(i, model);
    return cands;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::exception_ptr> errors(n);
  // Ops are taken in schedule order and an op taken is always priced; after a failure no new op is taken. So every
  // op before the failing one (taken earlier) was priced, and the first error in schedule order is the one a single
  // thread would have met.
  const auto work = [&](const PlacementCostModel& with) {
    while (!failed) {
      const std::size_t i = next++;
      if (i >= n) return;
      try {
        price(i, with);
      } catch (...) {
        errors[i] = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::shared_ptr<KernelEstimates>> views;
  std::vector<std::unique_ptr<PlacementCostModel>> models;
  for (std::size_t w = 0; w < workers; ++w) {
    views.push_back(kernels->for_another_thread());
    models.push_back(std::make_unique<PlacementCostModel>(arch, true, views.back()));
  }
  {
    std::vector<std::jthread> others;
    for (std::size_t w = 1; w < workers; ++w) others.emplace_back([&, w] { work(*models[w]); });
    work(*models[0]);
  }
  for (const std::shared_ptr<KernelEstimates>& view : views) kernels->absorb(*view);
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return cands;
}

/// The op whose placement decides where a data tensor without a producer (a graph input) is staged: the first op
/// reading it (SplitPlacement::stage: its pieces' regions, or whole in group 0's memory); nullopt for a constant
/// (held whole, or in every group that reads it) or a tensor with a producer.
std::optional<std::size_t> staged_by(const Graph& graph, std::size_t t) {
  const TensorNode& node = graph.tensor(t);
  if (node.producer || node.consumers.empty() || is_constant_tensor(graph, t)) return std::nullopt;
  return *std::min_element(node.consumers.begin(), node.consumers.end());
}

/// Where a tensor without a producer lies once staged for `first` under its candidate `c` (its input `k`).
TensorHolding staged_holding(const Candidate& c, std::size_t k) {
  if (!c.split) return TensorHolding{};
  return TensorHolding{false, c.needs[k]};
}

/// Prices plans over each op's candidates: an op's own estimate plus the exchanges its data inputs need from where
/// their producers' placements (in `state`) left them; a graph input from where its first reader had it staged.
class PlanPricer {
 public:
  PlanPricer(const Graph& graph, const PlacementCostModel& model, const std::vector<std::vector<Candidate>>& cands,
             const ExecutionPlan* layouts)
      : graph_(graph), model_(model), cands_(cands), layouts_(layouts), relaid_(graph.ops().size()) {
    // The inputs each op wants in another layout than their producer wrote (the schedule's re-layout steps).
    if (layouts == nullptr) return;
    for (const Step& step : layouts->steps) {
      if (step.kind == Step::Kind::kRelayout && step.op < relaid_.size()) relaid_[step.op].push_back(step.tensor);
    }
  }

  Estimate input_cost(std::size_t i, const Candidate& c, const std::vector<std::size_t>& state) const {
    Estimate cost = c.own;
    const OpNode& op = graph_.ops()[i];
    // The holding and the regions are read where they lie (this runs for every candidate of every move of the
    // search); copied only for a staged input, whose regions an earlier reader's copies reduce.
    TensorHolding staged;
    std::vector<std::optional<TensorRegion>> reduced;
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      const TensorNode& t = graph_.tensor(op.inputs[k]);
      const TensorHolding* held = nullptr;
      const std::vector<std::optional<TensorRegion>>* need = &c.needs[k];
      if (t.producer) {
        const OpNode& producer = graph_.ops()[*t.producer];
        const std::size_t out = producer.output_index(op.inputs[k]);
        held = &cands_[*t.producer][state[*t.producer]].holds[out];
      } else if (const std::optional<std::size_t> first = staged_by(graph_, op.inputs[k]); first && *first != i) {
        // Staged where its first reader needs it: another reader that wants it elsewhere gathers it.
        const OpNode& reader = graph_.ops()[*first];
        const std::size_t at = reader.input_index(op.inputs[k]);
        staged = staged_holding(cands_[*first][state[*first]], at);
        held = &staged;
        reduced = c.needs[k];
        reuse_earlier_copies(op.inputs[k], i, state, staged, reduced);
        need = &reduced;
      } else {
        continue;  // staged where this op needs it, or a constant read in place
      }
      const bool relayout = std::find(relaid_[i].begin(), relaid_[i].end(), op.inputs[k]) != relaid_[i].end();
      // Boxes of a whole copy (read in place) only where the staging keeps the copy and the reader's view dense.
      const OpNode* reader = dense_layouts(layouts_, i, k) && dense_source(op.inputs[k]) ? &op : nullptr;
      const Estimate e = model_.exchange(graph_, op.inputs[k], *held, *need, !c.split, relayout, reader,
                                         c.split ? std::string_view(c.split->axis.rule) : std::string_view());
      cost.cycles += e.cycles;
      cost.terms.exchange += e.terms.exchange;
    }
    return cost;
  }
  /// Drops from `need` (op i's regions of graph input t per group) what an earlier reader of t already got there:
  /// the executor keeps the copy one reader gathered and gives it to the next that wants the same region.
  void reuse_earlier_copies(std::size_t t, std::size_t i, const std::vector<std::size_t>& state,
                            const TensorHolding& held, std::vector<std::optional<TensorRegion>>& need) const {
    // With a whole copy, rows a pointwise conv reads in place are a box that reader keeps to itself: no copy made.
    const bool whole_copy =
        held.whole || std::any_of(held.groups.begin(), held.groups.end(), [](const auto& h) { return h && h->whole; });
    for (const std::size_t j : graph_.tensor(t).consumers) {
      if (j >= i) break;  // in op order
      const OpNode& reader = graph_.ops()[j];
      const std::size_t at = reader.input_index(t);
      const Candidate& earlier = cands_[j][state[j]];
      for (std::size_t g = 0; g < need.size(); ++g) {
        const std::optional<TensorRegion>& got = earlier.needs[at][g];
        if (need[g] && got && same_region(*need[g], *got) && !(whole_copy && rows_in_place(graph_, reader, at, *got)))
          need[g].reset();
      }
    }
  }
  double input_cycles(std::size_t i, const std::vector<std::size_t>& state) const {
    return input_cost(i, cands_[i][state[i]], state).cycles;
  }
  /// The plan's estimate: every op's cost under `state`.
  double total(const std::vector<std::size_t>& state) const {
    double sum = 0;
    for (std::size_t i = 0; i < state.size(); ++i) sum += input_cycles(i, state);
    return sum;
  }

 private:
  const Graph& graph_;
  const PlacementCostModel& model_;
  const std::vector<std::vector<Candidate>>& cands_;
  /// The producer's layout of tensor t (a graph input: its first reader's) is dense.
  bool dense_source(std::size_t t) const {
    const TensorNode& node = graph_.tensor(t);
    if (!node.producer) {
      if (node.consumers.empty()) return true;
      const std::size_t first = *std::min_element(node.consumers.begin(), node.consumers.end());
      return dense_layouts(layouts_, first, graph_.ops()[first].input_index(t));
    }
    const OpNode& producer = graph_.ops()[*node.producer];
    const auto out = producer.output_index(t);
    return dense_layouts(layouts_, producer.index, producer.inputs.size() + out);
  }

  const ExecutionPlan* layouts_;
  std::vector<std::vector<std::size_t>> relaid_;  ///< per op: the tensors it re-lays out
};

/// The ops whose input costs depend on each op's placement, each once: the readers of its outputs and, for a reader
/// of a graph input, that input's later readers (staged where the first wants it, copies reused by the next).
std::vector<std::vector<std::size_t>> consumers_of(const Graph& graph) {
  std::vector<std::vector<std::size_t>> consumers(graph.ops().size());
  const auto add = [&](std::size_t from, std::size_t i) {
    if (from != i && std::find(consumers[from].begin(), consumers[from].end(), i) == consumers[from].end())
      consumers[from].push_back(i);
  };
  for (std::size_t i = 0; i < graph.ops().size(); ++i) {
    for (const std::size_t t : graph.ops()[i].inputs) {
      if (graph.tensor(t).producer) {
        add(*graph.tensor(t).producer, i);
      } else if (staged_by(graph, t)) {
        for (const std::size_t j : graph.tensor(t).consumers) {
          if (j < i) add(j, i);
        }
      }
    }
  }
  return consumers;
}

/// The path search fixes a branch op's placement by the producer placements its path implies for the op after it,
/// not by what the op costs: an op placed worse than an alternative for itself and its consumers is moved, one op at
/// a time, until no single move lowers the plan's estimate (each move lowers it, so this ends).
void refine(const PlanPricer& pricer, const std::vector<std::vector<Candidate>>& cands,
            const std::vector<std::vector<std::size_t>>& consumers, std::vector<std::size_t>& state) {
  const auto local = [&](std::size_t i) {
    double sum = pricer.input_cycles(i, state);
    for (const std::size_t j : consumers[i]) sum += pricer.input_cycles(j, state);
    return sum;
  };
  constexpr int kMaxSweeps = 32;  // a bound on planning time
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool moved = false;
    for (std::size_t i = 0; i < state.size(); ++i) {
      const std::size_t kept = state[i];
      double best = local(i);
      std::size_t best_c = kept;
      for (std::size_t c = 0; c < cands[i].size(); ++c) {
        if (c == kept) continue;
        state[i] = c;
        const double cost = local(i);
        if (cost < best * (1 - 1e-9)) best = cost, best_c = c;  // strictly lower, rounding aside
      }
      state[i] = best_c;
      moved = moved || best_c != kept;
    }
    if (!moved) return;
  }
}

/// The candidate `split` stands for: whole, or the split's own placement.
Candidate candidate_of(const Graph& graph, const OpNode& op, const std::optional<OpSplit>& split,
                       const PlacementCostModel& model, std::size_t groups) {
  return split ? split_candidate(graph, op, *split, model, groups) : whole_candidate(graph, op, model, groups);
}

/// Each op's one candidate: the placement `plan` gives it (nullopt: whole).
std::vector<std::vector<Candidate>> plan_candidates(const Graph& graph, const SplitPlan& plan,
                                                    const PlacementCostModel& model) {
  std::vector<std::vector<Candidate>> cands(graph.ops().size());
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const std::optional<OpSplit> none;
    cands[i].push_back(
        candidate_of(graph, graph.ops()[i], i < plan.ops.size() ? plan.ops[i] : none, model, plan.memories));
  }
  return cands;
}

/// Every op's candidates with their estimates in the chosen plan's context (`SPDLOG_LEVEL=ldmsim.placement=debug`):
/// what a placement lost by, term by term.
void log_candidates(const Graph& graph, const PlanPricer& pricer, const std::vector<std::vector<Candidate>>& cands,
                    const std::vector<std::size_t>& state) {
  const auto log = logger("placement");
  if (!log->should_log(spdlog::level::debug)) return;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    for (std::size_t c = 0; c < cands[i].size(); ++c) {
      const Estimate e = pricer.input_cost(i, cands[i][c], state);
      log->debug(
          "{}: {}{} estimated {:.0f} cycles (compute {:.0f}, local {:.0f}, remote {:.0f}, exchange {:.0f}, "
          "launch {:.0f})",
          graph.ops()[i].layer(), cands[i][c].label, c == state[i] ? " (chosen)" : "", e.cycles, e.terms.compute,
          e.terms.local, e.terms.remote, e.terms.exchange, e.terms.launch);
    }
  }
}

/// The Viterbi path through each op's candidates under `pricer`, then refined op by op.
std::vector<std::size_t> search_path(const Graph& graph, const PlanPricer& pricer,
                                     const std::vector<std::vector<Candidate>>& cands,
                                     const std::vector<std::vector<std::size_t>>& consumers) {
  const auto& ops = graph.ops();
  const std::size_t n = ops.size();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(n);
  std::vector<std::vector<std::size_t>> back(n);
  std::vector<std::size_t> state(n, 0);  // the placements along the path being priced
  for (std::size_t i = 0; i < n; ++i) {
    best[i].assign(cands[i].size(), kInf);
    back[i].assign(cands[i].size(), 0);
    // The earliest op whose placement op i's inputs depend on (a producer, or a graph input's first reader): the
    // path is walked back to it.
    std::size_t earliest = i;
    for (const std::size_t t : ops[i].inputs) {
      if (graph.tensor(t).producer) earliest = std::min(earliest, *graph.tensor(t).producer);
      if (const std::optional<std::size_t> first = staged_by(graph, t)) earliest = std::min(earliest, *first);
    }
    const std::size_t previous = i == 0 ? 1 : cands[i - 1].size();
    for (std::size_t p = 0; p < previous; ++p) {
      if (i > 0) {
        state[i - 1] = p;
        for (std::size_t m = i - 1; m > earliest; --m) state[m - 1] = back[m][state[m]];
      }
      const double before = i == 0 ? 0 : best[i - 1][p];
      for (std::size_t c = 0; c < cands[i].size(); ++c) {
        const double total = before + pricer.input_cost(i, cands[i][c], state).cycles;
        if (total < best[i][c]) best[i][c] = total, back[i][c] = p;
      }
    }
  }
  // The cheapest final state, and the path into it, refined op by op.
  state[n - 1] =
      static_cast<std::size_t>(std::min_element(best[n - 1].begin(), best[n - 1].end()) - best[n - 1].begin());
  for (std::size_t i = n - 1; i > 0; --i) state[i - 1] = back[i][state[i]];
  refine(pricer, cands, consumers, state);
  return state;
}

/// Leaves each pinned op (SplitOptions::pinned) only its pinned candidate; which ops are pinned. A pin names an op
/// by OpNode::layer, or by its label (`type#index`, unique) where names repeat. An op the graph does not have, a name
/// several ops share, or a placement its op is not offered, is refused by name, with what there is instead.
std::vector<bool> apply_pins(const Graph& graph, const std::map<std::string, std::string>& pins,
                             std::vector<std::vector<Candidate>>& cands) {
  const auto& ops = graph.ops();
  std::vector<bool> pinned(ops.size(), false);
  for (const auto& [name, label] : pins) {
    std::vector<std::size_t> named;  // positions in the schedule
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].layer() == name || ops[i].label() == name) named.push_back(i);
    }
    if (named.empty()) {
      throw ConfigError(
          fmt::format("placement pin {}={}: the model has no op '{}' (names as `ldmsim plan` lists them, "
                      "e.g. '{}')",
                      name, label, name, ops.empty() ? std::string() : ops.front().layer()));
    }
    if (named.size() > 1) {
      std::vector<std::string> labels;
      for (const std::size_t i : named) labels.push_back(fmt::format("'{}'", ops[i].label()));
      throw ConfigError(fmt::format("placement pin {}={}: {} ops are named '{}'; pin each by its label: {}", name,
                                    label, named.size(), name, fmt::join(labels, ", ")));
    }
    const std::size_t i = named.front();
    if (pinned[i]) {
      throw ConfigError(fmt::format("placement pin {}={}: op '{}' is pinned twice (by its name and its label)", name,
                                    label, ops[i].layer()));
    }
    const auto match =
        std::find_if(cands[i].begin(), cands[i].end(), [&](const Candidate& c) { return c.label == label; });
    if (match == cands[i].end()) {
      std::vector<std::string> labels;
      for (const Candidate& c : cands[i]) labels.push_back(fmt::format("'{}'", c.label));
      throw ConfigError(fmt::format("placement pin {}={}: op '{}' has no placement '{}'; its placements here: {}", name,
                                    label, name, label, fmt::join(labels, ", ")));
    }
    Candidate chosen = std::move(*match);
    cands[i].clear();
    cands[i].push_back(std::move(chosen));
    pinned[i] = true;
  }
  return pinned;
}

}  // namespace

void choose_placements(const Graph& graph, const Arch& arch, SplitPlan& plan, const ExecutionPlan* layouts,
                       std::shared_ptr<KernelEstimates> kernels, unsigned threads) {
  if (!kernels) kernels = std::make_shared<KernelEstimates>();
  const PlacementCostModel model(arch, true, kernels);
  const auto& ops = graph.ops();
  const std::size_t n = ops.size();
  plan.choices.assign(n, PlacementChoice{});
  if (n == 0) {
    std::vector<std::vector<Candidate>> none;
    (void)apply_pins(graph, plan.options.pinned, none);  // refuses any pin: there is no op to pin
    return;
  }
  std::vector<std::vector<Candidate>> cands = all_candidates(graph, plan, arch, layouts, model, kernels, threads);
  const std::vector<bool> pinned = apply_pins(graph, plan.options.pinned, cands);
  const PlanPricer pricer(graph, model, cands, layouts);
  const auto consumers = consumers_of(graph);
  std::vector<std::size_t> state = search_path(graph, pricer, cands, consumers);
  plan.estimated_cycles = pricer.total(state);
  // Never a plan estimated slower than `--split off` (every op whole; with pins, every op but the pinned ones):
  // neither the path search nor the refinement guarantees it on a graph with branches. Then refined from there,
  // since single moves may lower it too.
  const std::vector<std::size_t> off(n, 0);
  if (pricer.total(off) <= plan.estimated_cycles) {
    state = off;
    refine(pricer, cands, consumers, state);
    plan.estimated_cycles = pricer.total(state);
  }
  log_candidates(graph, pricer, cands, state);
  for (std::size_t i = 0; i < n; ++i) {
    Candidate& chosen = cands[i][state[i]];
    PlacementChoice& choice = plan.choices[i];
    choice.placement = chosen.label;
    const Estimate estimate = pricer.input_cost(i, chosen, state);
    choice.estimated_cycles = estimate.cycles;
    choice.terms = estimate.terms;
    choice.cost_class = std::string(to_string(PlacementCostModel::cost_class(graph, ops[i])));
    choice.pinned = pinned[i];
    for (std::size_t c = 0; c < cands[i].size(); ++c) {
      if (c == state[i]) continue;
      const double other = pricer.input_cost(i, cands[i][c], state).cycles;
      if (choice.runner_up.empty() || other < choice.runner_up_cycles) {
        choice.runner_up = cands[i][c].label;
        choice.runner_up_cycles = other;
      }
    }
    plan.ops[i] = std::move(chosen.split);
    if (plan.ops[i]) fill_piece_regions(graph, ops[i], *plan.ops[i]);  // the candidates were priced without them
  }
}

void price_placements(const Graph& graph, const Arch& arch, SplitPlan& plan, const ExecutionPlan* layouts,
                      std::shared_ptr<KernelEstimates> kernels) {
  const PlacementCostModel model(arch, true, std::move(kernels));
  const auto& ops = graph.ops();
  const std::size_t n = ops.size();
  const std::vector<std::vector<Candidate>> cands = plan_candidates(graph, plan, model);
  const PlanPricer pricer(graph, model, cands, layouts);
  const std::vector<std::size_t> state(n, 0);
  plan.choices.assign(n, PlacementChoice{});
  for (std::size_t i = 0; i < n; ++i) {
    PlacementChoice& choice = plan.choices[i];
    const Estimate estimate = pricer.input_cost(i, cands[i][0], state);
    const std::optional<OpSplit>& split = plan.ops[i];
    choice.placement = !split                              ? std::string("whole")
                       : split->axis.rule == kOneGroupRule ? fmt::format("whole on cg{}", split->pieces.front().group)
                                                           : split->axis.rule;
    choice.estimated_cycles = estimate.cycles;
    choice.terms = estimate.terms;
    choice.cost_class = std::string(to_string(PlacementCostModel::cost_class(graph, ops[i])));
  }
  plan.estimated_cycles = pricer.total(state);
}

double estimate_plan(const Graph& graph, const Arch& arch, const SplitPlan& plan, const ExecutionPlan* layouts) {
  const PlacementCostModel model(arch);
  return PlanPricer(graph, model, plan_candidates(graph, plan, model), layouts)
      .total(std::vector<std::size_t>(graph.ops().size(), 0));
}

std::string describe_placements(const Graph& graph, const SplitPlan& plan) {
  if (plan.choices.empty()) return {};
  std::string out = fmt::format("placements (--split {}), estimated {:.0f} cycles:\n", split_mode(plan.options),
                                plan.estimated_cycles);
  for (std::size_t i = 0; i < plan.choices.size(); ++i) {
    const PlacementChoice& c = plan.choices[i];
    out += fmt::format("  {}: {}, estimated {:.0f} cycles", graph.ops()[i].layer(), c.placement, c.estimated_cycles);
    // A plan the rule made (`--split on`) compares no placements.
    out += !plan.options.cost_aware ? std::string("\n")
           : c.pinned               ? std::string(" (pinned)\n")
           : c.runner_up.empty()    ? std::string(" (no other placement)\n")
                                    : fmt::format(" (runner-up {}: {:.0f})\n", c.runner_up, c.runner_up_cycles);
  }
  return out;
}

}  // namespace ldmsim
