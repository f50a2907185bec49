// The split rule (see split.hpp, docs/splitting.md): with M memories and C cores, take the op's first splittable
// dimension with D >= M (else its largest), then mode 1 (D >= C: C pieces, one per core), mode 2 (M <= D < C: M
// pieces, one per group) or mode 3 (D < M: D pieces of one); pieces go to the groups in blocks.
#include "ldmsim/graph/split.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ldmsim/graph/placement_choice.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

/// The candidates in the rule's order: the axis an input is already split along (it keeps its split: no exchange),
/// then the first with D >= M, else the largest; the rest after them, in case those cannot be cut so. Axes offered
/// to the cost-aware choice only are not among them.
std::vector<const SplitAxis*> candidates(const std::vector<SplitAxis>& axes, std::uint32_t memories,
                                         std::optional<std::size_t> held) {
  std::vector<const SplitAxis*> out;
  if (held) {
    for (const SplitAxis& a : axes) {
      if (a.input_axis == static_cast<int>(*held) && a.extent >= 2 && !a.reduces && !a.cost_aware_only)
        out.push_back(&a);
    }
  }
  for (const SplitAxis& a : axes) {
    if (a.extent >= memories && !a.cost_aware_only) out.push_back(&a);
  }
  std::vector<const SplitAxis*> rest;
  for (const SplitAxis& a : axes) {
    if (a.extent < memories && !a.cost_aware_only) rest.push_back(&a);
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [](const SplitAxis* x, const SplitAxis* y) { return x->extent > y->extent; });
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

/// True when every region of `w` holds at least one index (a conv's rows that read only padding hold none).
bool nonempty(const PieceWork& w) {
  return std::all_of(w.regions.begin(), w.regions.end(),
                     [](const TensorRegion& r) { return r.whole || r.end > r.begin; });
}

/// The pieces' inclusive ranges and homes; `padded` receives D after rounding.
std::vector<SplitPiece> make_pieces(const SplitAxis& axis, int mode, const SplitPlan& plan, const Arch& arch,
                                    std::uint64_t& padded) {
  const std::uint64_t d = axis.extent;
  const std::uint64_t count = mode == 1 ? plan.cores : mode == 2 ? plan.memories : d;
  std::vector<std::uint64_t> bounds(count + 1, 0);
  // Whole DMA transactions along a contiguous dimension (fp16 elements); whole indices elsewhere.
  const std::uint64_t granule = axis.contiguous ? std::max<std::uint64_t>(1, arch.dma.transaction_bytes / 2) : 1;
  if (plan.options.rounding == SplitRounding::kPad && mode != 3) {
    const std::uint64_t size = ceil_div(ceil_div(d, count), granule) * granule;
    for (std::uint64_t i = 0; i <= count; ++i) bounds[i] = i * size;
  } else if (plan.options.rounding == SplitRounding::kAlign && mode != 3 && granule > 1) {
    const std::uint64_t units = ceil_div(d, granule);
    for (std::uint64_t i = 0; i <= count; ++i) bounds[i] = std::min(d, i * units / count * granule);
  } else {
    for (std::uint64_t i = 0; i <= count; ++i) bounds[i] = i * d / count;
  }
  padded = bounds[count];
  const std::uint64_t per_group = mode == 1 ? plan.cores / plan.memories : 1;
  std::vector<SplitPiece> pieces;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (bounds[i + 1] == bounds[i]) continue;  // an empty piece (exact rounding never makes one)
    pieces.push_back({bounds[i], bounds[i + 1] - 1, static_cast<int>(i / per_group),
                      mode == 1 ? static_cast<int>(i % per_group) : -1});
  }
  return pieces;
}

/// One level of pairwise sums over `live` (piece indices): (0,1), (2,3), ...; the left one of each pair stays live.
void pair_up(std::vector<std::size_t>& live, const char* exchange, std::vector<ReductionPair>& level) {
  std::vector<std::size_t> next;
  for (std::size_t i = 0; i < live.size(); i += 2) {
    next.push_back(live[i]);
    if (i + 1 < live.size()) level.push_back({live[i], live[i + 1], exchange});
  }
  live = std::move(next);
}

/// Pairwise, first among each group's pieces (core level: its cores' partials), then among the groups' sums (core
/// group level), until one result remains (kept by piece 0). Groups hold runs of pieces, so with equal groups
/// this is the plain pairwise tree (o1+o2, o3+o4, then their sums); with unequal ones no pair crosses a group
/// before every group has summed its own.
std::vector<std::vector<ReductionPair>> reduction_tree(const std::vector<SplitPiece>& pieces) {
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (i == 0 || pieces[i].group != pieces[i - 1].group) groups.emplace_back();
    groups.back().push_back(i);
  }
  std::vector<std::vector<ReductionPair>> levels;
  const auto pending = [&] {
    return std::any_of(groups.begin(), groups.end(), [](const auto& g) { return g.size() > 1; });
  };
  while (pending()) {
    auto& level = levels.emplace_back();
    for (auto& g : groups) pair_up(g, "core", level);
  }
  std::vector<std::size_t> sums;
  for (const auto& g : groups) sums.push_back(g.front());
  while (sums.size() > 1) pair_up(sums, "cg", levels.emplace_back());
  return levels;
}

bool is_weight(const Graph& graph, const OpNode& op, std::size_t operand) {
  return operand < op.inputs.size() && op.bound->input_role(operand) == InputRole::kParameter &&
         !graph.tensor(op.inputs[operand]).producer;
}

}  // namespace

std::optional<OpSplit> split_along(const Graph& graph, const OpNode& op, const SplitAxis& axis, const SplitPlan& plan,
                                   const Arch& arch, PieceRegions regions) {
  OpSplit s;
  s.op = op.index;
  s.axis = axis;
  s.mode = axis.extent >= plan.cores ? 1 : axis.extent >= plan.memories ? 2 : 3;
  s.pieces = make_pieces(axis, s.mode, plan, arch, s.padded);
  if (axis.reduces) s.tree = reduction_tree(s.pieces);
  s.blocks.assign(plan.memories, {0, 0});
  PieceWork w;  // each piece's regions in turn
  for (const SplitPiece& p : s.pieces) {
    auto& [begin, end] = s.blocks[static_cast<std::size_t>(p.group)];
    const std::uint64_t first = std::min(p.first, axis.extent), last = std::min(p.last + 1, axis.extent);
    if (first >= last) continue;  // padding only
    piece_regions(graph, op, axis, first, last, w);
    if (!nonempty(w)) return std::nullopt;
    if (begin == end) begin = first;
    end = last;
  }
  for (const auto& [begin, end] : s.blocks) {
    if (begin >= end) continue;
    piece_regions(graph, op, axis, begin, end, w);
    if (!nonempty(w)) return std::nullopt;
  }
  if (regions == PieceRegions::kFilled) fill_piece_regions(graph, op, s);
  return s;
}

void fill_piece_regions(const Graph& graph, const OpNode& op, OpSplit& s) {
  if (s.axis.rule == kOneGroupRule) return;  // one piece, the whole op: no regions (one_group), parallelism "none"
  s.tensor_pieces.assign(op.inputs.size() + op.outputs.size(), {});
  bool data = false, model = false;
  PieceWork w;
  for (const SplitPiece& p : s.pieces) {
    piece_regions(graph, op, s.axis, p.first, p.last + 1, w);
    for (std::size_t t = 0; t < w.regions.size(); ++t) {
      // An attention kernel's heads write one Y, held whole (docs/splitting.md, "Attention by heads").
      if (w.regions[t].whole || (s.axis.rule == kHeadsRule && t >= op.inputs.size())) continue;
      s.tensor_pieces[t].push_back(w.regions[t]);
      if (t < op.inputs.size()) (is_weight(graph, op, t) ? model : data) = true;
    }
  }
  if (s.whole_output) s.tensor_pieces.back().clear();  // the output is held whole (rows_into_one)
  s.parallelism = data && model ? "hybrid" : model ? "model" : "data";
}

OpSplit one_group(const OpNode& op, const SplitPlan& plan, int group) {
  OpSplit s;
  s.op = op.index;
  s.axis = SplitAxis{kOneGroupRule, 0, 0, 1, false, false};
  s.padded = 1;
  s.mode = 3;  // one piece on one group
  s.parallelism = "none";
  s.pieces = {SplitPiece{0, 0, group, -1}};
  s.blocks.assign(plan.memories, {0, 0});
  s.blocks[static_cast<std::size_t>(group)] = {0, 1};
  s.tensor_pieces.assign(op.inputs.size() + op.outputs.size(), {});
  return s;
}

std::string_view split_mode(const SplitOptions& options) noexcept {
  return !options.enabled ? "off" : options.cost_aware ? "auto" : "on";
}

std::string_view to_string(SplitRounding rounding) noexcept {
  return rounding == SplitRounding::kPad ? "pad" : rounding == SplitRounding::kAlign ? "align" : "exact";
}

std::optional<std::pair<std::string, std::string>> parse_pin(std::string_view text) {
  const std::size_t at = text.rfind('=');
  if (at == std::string_view::npos || at == 0 || at + 1 == text.size()) return std::nullopt;
  return std::pair{std::string(text.substr(0, at)), std::string(text.substr(at + 1))};
}

std::optional<SplitRounding> parse_split_rounding(std::string_view text) noexcept {
  if (text == "pad") return SplitRounding::kPad;
  if (text == "align") return SplitRounding::kAlign;
  if (text == "exact") return SplitRounding::kExact;
  return std::nullopt;
}

SplitPlan plan_split(const Graph& graph, const Arch& arch, const SplitOptions& options, const ExecutionPlan* layouts,
                     std::shared_ptr<KernelEstimates> kernels, unsigned threads) {
  SplitPlan plan;
  plan.options = options;
  plan.memories = arch.core_groups;
  plan.cores = arch.total_cores();
  plan.ops.resize(graph.ops().size());
  if (!options.pinned.empty() && (!options.enabled || !options.cost_aware || plan.memories < 2)) {
    throw ConfigError(fmt::format(
        "placements given ({} = {}{}) but {}: they pin the cost-aware choice, `--split auto` on "
        "an arch of two or more core groups",
        options.pinned.begin()->first, options.pinned.begin()->second,
        options.pinned.size() > 1 ? fmt::format(" and {} more", options.pinned.size() - 1) : "",
        plan.memories < 2 ? fmt::format("{} has one core group", arch.name)
        : options.enabled ? std::string("the split is the fixed rule (on)")
                          : std::string("the split is off (a workload JSON's default: pass --split auto, or "
                                        "split=\"auto\" in Python)")));
  }
  if (!options.enabled || plan.memories < 2) return plan;  // one memory: nothing to place
  if (options.cost_aware) {
    choose_placements(graph, arch, plan, layouts, std::move(kernels), threads);
    return plan;
  }
  std::vector<std::optional<std::size_t>> held_axis(graph.tensors().size());  // by its producer
  for (const OpNode& op : graph.ops()) {
    const std::vector<SplitAxis> axes = split_axes(graph, op);
    // An input's axis numbers the op's dimensions only when it has the first input's rank (a broadcast operand
    // of lower rank numbers them otherwise).
    std::optional<std::size_t> held;
    for (const std::size_t t : op.inputs) {
      if (graph.tensor(t).shape.rank() == graph.tensor(op.inputs[0]).shape.rank()) held = held ? held : held_axis[t];
    }
    for (const SplitAxis* axis : candidates(axes, plan.memories, held)) {
      if (axis->extent < 2) continue;
      std::optional<OpSplit> s = split_along(graph, op, *axis, plan, arch);
      if (!s) continue;
      for (std::size_t k = 0; k < op.outputs.size(); ++k) {
        const auto& pieces = s->tensor_pieces[op.inputs.size() + k];
        if (!axis->reduces && !pieces.empty()) held_axis[op.outputs[k]] = pieces.front().axis;
      }
      plan.ops[op.index] = std::move(s);
      break;
    }
  }
  price_placements(graph, arch, plan, layouts, std::move(kernels));
  return plan;
}

nlohmann::json SplitPlan::to_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : ops) {
    if (!s) continue;
    nlohmann::json pieces = nlohmann::json::array(), tree = nlohmann::json::array();
    for (const SplitPiece& p : s->pieces)
      pieces.push_back({{"first", p.first}, {"last", p.last}, {"group", p.group}, {"core", p.core}});
    for (const auto& level : s->tree) {
      nlohmann::json pairs = nlohmann::json::array();
      for (const ReductionPair& r : level)
        pairs.push_back({{"left", r.left}, {"right", r.right}, {"exchange", r.exchange}});
      tree.push_back(std::move(pairs));
    }
    out.push_back({{"op", s->op},
                   {"rule", s->axis.rule},
                   {"extent", s->axis.extent},
                   {"padded", s->padded},
                   {"mode", s->mode},
                   {"parallelism", s->parallelism},
                   {"pieces", std::move(pieces)},
                   {"reduction_tree", std::move(tree)}});
  }
  nlohmann::json result{{"enabled", options.enabled},
                        {"mode", split_mode(options)},
                        {"rounding", to_string(options.rounding)},
                        {"memories", memories},
                        {"cores", cores},
                        {"ops", std::move(out)}};
  if (!choices.empty()) {
    nlohmann::json placements = nlohmann::json::array();
    for (std::size_t i = 0; i < choices.size(); ++i) {
      nlohmann::json entry = ldmsim::to_json(choices[i]);
      entry["op"] = i;
      placements.push_back(std::move(entry));
    }
    result["placements"] = std::move(placements);
    result["estimated_cycles"] = estimated_cycles;
  }
  return result;
}

}  // namespace ldmsim
