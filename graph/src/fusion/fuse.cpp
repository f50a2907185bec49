// The fusion pass's driver: activation folds, groups, their mappings, and the fused graph (each fused group one op,
// each fold the producer rebound with its activation, placed in a topological order of the contracted graph that
// keeps the original order where it can).
#include <fmt/format.h>

#include <algorithm>
#include <queue>

#include "fusion_internal.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

namespace {

/// A node of the contracted graph: an unfused op, a fused group, or an op with the activation folded into it.
struct Node {
  std::vector<std::size_t> ops;
  std::optional<std::size_t> group;  // index into the fused groups
  bool fold = false;                 // ops: the producer, then its activation
};

/// For each relu or clip that can fold into its producer (activation.hpp in the kernels): that producer. It can
/// when the producer takes an activation and the relu or clip is the only reader of its output, which is no graph
/// output (so the value before the activation is never needed).
std::vector<std::optional<std::size_t>> foldable_activations(const Graph& graph) {
  std::vector<std::optional<std::size_t>> into(graph.ops().size());
  for (const OpNode& op : graph.ops()) {
    if ((op.type != "relu" && op.type != "clip") || op.inputs.size() != 1) continue;
    const TensorNode& t = graph.tensor(op.inputs[0]);
    if (!t.producer || t.consumers.size() != 1 || t.is_output) continue;
    const OpNode& producer = graph.ops()[*t.producer];
    // Rebound from its attributes: an op added already bound without them is left alone.
    if (producer.outputs.size() == 1 && producer.attrs.is_object() && producer.bound->folds_activation()) {
      into[op.index] = producer.index;
    }
  }
  return into;
}

/// The producer's attributes with "activation" set from the relu or clip (whose own attributes are clip's bounds).
nlohmann::json folded_attrs(const OpNode& producer, const OpNode& activation) {
  nlohmann::json attrs = producer.attrs;
  nlohmann::json folded = activation.attrs.is_object() ? activation.attrs : nlohmann::json::object();
  folded["type"] = activation.type;
  attrs["activation"] = std::move(folded);
  return attrs;
}

std::string group_name(const Graph& graph, const std::vector<std::size_t>& ops) {
  std::vector<std::string> names;
  for (std::size_t o : ops) names.push_back(graph.ops()[o].layer());
  std::string joined = fmt::format("{}", fmt::join(names, "+"));
  if (joined.size() > 160) joined = fmt::format("{}+...+{} ({} ops)", names.front(), names.back(), names.size());
  return joined;
}

}  // namespace

FusedGraph fuse(const Graph& graph, const Arch& arch, StagingPolicy policy, const FusionOptions& options) {
  FusedGraph result;
  std::vector<fusion::LoweredGroup> lowered;
  std::vector<std::optional<std::size_t>> group_of(graph.ops().size());  // op -> index into lowered
  const std::vector<std::optional<std::size_t>> folded_into = foldable_activations(graph);
  std::vector<std::optional<std::size_t>> activation_of(graph.ops().size());  // producer -> its folded activation
  std::vector<char> folded(graph.ops().size(), 0);
  for (std::size_t o = 0; o < folded_into.size(); ++o) {
    if (folded_into[o]) activation_of[*folded_into[o]] = o, folded[o] = 1;
  }
  for (const auto& ops : fusion::find_groups(graph, folded)) {
    FusionGroup g;
    g.ops = ops;
    fusion::LoweredGroup low;
    for (const FusionFrame& frame : fusion::frame_candidates(graph, ops, &g.backbones)) {
      g.frame = frame;
      low = fusion::lower_group(graph, ops, frame);
      g.mapping = choose_fused_mapping(low.program, arch, policy, options.cores);
      if (g.mapping) break;
    }
    for (const FusedValue& v : low.program.values) {
      g.values.push_back(fmt::format("{} {}", v.name, v.pattern(g.frame)));
    }
    if (!g.mapping) {
      g.not_fused = fmt::format("even one row cut across a core group does not fit the {}-byte ldm", arch.ldm_bytes);
    } else {
      for (std::size_t o : ops) group_of[o] = lowered.size();
      lowered.push_back(std::move(low));
    }
    result.groups.push_back(std::move(g));
  }
  // Contracted nodes, ordered by Kahn's algorithm with the smallest first op first.
  std::vector<Node> nodes;
  std::vector<std::size_t> node_of(graph.ops().size());
  std::vector<std::optional<std::size_t>> node_of_group(lowered.size());
  std::vector<std::size_t> fused_group_index;  // lowered index -> result.groups index
  for (std::size_t i = 0; i < result.groups.size(); ++i) {
    if (result.groups[i].mapping) fused_group_index.push_back(i);
  }
  for (const OpNode& op : graph.ops()) {
    if (const auto p = folded_into[op.index]) {  // after its producer: ops are in a topological order
      node_of[op.index] = node_of[*p];
    } else if (const auto a = activation_of[op.index]) {
      node_of[op.index] = nodes.size();
      nodes.push_back({{op.index, *a}, std::nullopt, true});
    } else if (const auto g = group_of[op.index]) {
      if (!node_of_group[*g]) {
        node_of_group[*g] = nodes.size();
        nodes.push_back({lowered[*g].ops, *g});
      }
      node_of[op.index] = *node_of_group[*g];
    } else {
      node_of[op.index] = nodes.size();
      nodes.push_back({{op.index}, std::nullopt});
    }
  }
  std::vector<std::vector<std::size_t>> successors(nodes.size());
  std::vector<std::size_t> pending(nodes.size(), 0);
  for (const OpNode& op : graph.ops()) {
    for (std::size_t t : op.inputs) {
      const auto p = graph.tensor(t).producer;
      if (!p || node_of[*p] == node_of[op.index]) continue;
      successors[node_of[*p]].push_back(node_of[op.index]);
      ++pending[node_of[op.index]];
    }
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (pending[n] == 0) ready.push(n);
  }
  Graph& out = result.graph;
  out.name = graph.name;
  out.arch = graph.arch;
  out.staging = graph.staging;
  for (const TensorNode& t : graph.tensors()) {
    if (t.is_input()) out.add_input(t.name, t.shape, t.init);
  }
  const auto names = [&](const std::vector<std::size_t>& tensors) {
    std::vector<std::string> v;
    for (std::size_t t : tensors) v.push_back(graph.tensor(t).name);
    return v;
  };
  std::size_t emitted = 0;
  while (!ready.empty()) {
    const std::size_t n = ready.top();
    ready.pop();
    ++emitted;
    if (const auto g = nodes[n].group) {
      const fusion::LoweredGroup& low = lowered[*g];
      FusionGroup& report = result.groups[fused_group_index[*g]];
      const std::size_t index =
          out.add_bound_op("fused", names(low.inputs), names(low.outputs), low.bind(graph, *report.mapping, arch.name),
                           group_name(graph, low.ops));
      report.kernel = out.ops()[index].label();
    } else if (nodes[n].fold) {
      static const OperatorRegistry registry = OperatorRegistry::builtin();
      const OpNode& producer = graph.ops()[nodes[n].ops[0]];
      const OpNode& activation = graph.ops()[nodes[n].ops[1]];
      const nlohmann::json attrs = folded_attrs(producer, activation);
      const std::size_t index =
          out.add_op(registry, producer.type, names(producer.inputs), names(activation.outputs),
                     JsonField(attrs, "the fusion pass's activation fold"), group_name(graph, nodes[n].ops));
      result.folds.push_back({producer.index, activation.index, out.ops()[index].label()});
    } else {
      const OpNode& op = graph.ops()[nodes[n].ops[0]];
      out.add_bound_op(op.type, names(op.inputs), names(op.outputs), op.bound, op.name, op.attrs);
    }
    for (std::size_t s : successors[n]) {
      if (--pending[s] == 0) ready.push(s);
    }
  }
  if (emitted != nodes.size()) throw std::logic_error("fusion: the contracted graph has a cycle");
  for (std::size_t t : graph.outputs()) out.mark_output(graph.tensor(t).name);
  return result;
}

std::string FusedGraph::describe(const Graph& original) const {
  std::string out = fmt::format(
      "fusion: {} candidate group{}, {} fused; {} activation{} folded\n", groups.size(), groups.size() == 1 ? "" : "s",
      std::count_if(groups.begin(), groups.end(), [](const FusionGroup& g) { return g.mapping.has_value(); }),
      folds.size(), folds.size() == 1 ? "" : "s");
  for (const ActivationFold& f : folds) {
    out += fmt::format("  activation folded: {} into {} (kernel {})\n", original.ops()[f.activation].label(),
                       original.ops()[f.op].label(), f.kernel);
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const FusionGroup& g = groups[i];
    std::vector<std::string> ops, backbones;
    for (std::size_t o : g.ops) ops.push_back(original.ops()[o].label());
    for (std::size_t b = 0; b < g.backbones.size(); ++b) {
      backbones.push_back(
          fmt::format("{} ({})", original.ops()[g.backbones[b]].label(), b == 0 ? "primary" : "secondary"));
    }
    out += fmt::format("  group {}: {} ops: {}\n", i, g.ops.size(), fmt::join(ops, ", "));
    out += fmt::format("    backbones: {}\n",
                       backbones.empty() ? "none (point-wise)" : fmt::format("{}", fmt::join(backbones, ", ")));
    out += fmt::format("    frame {} {}\n", g.frame.shape.str(), g.frame.str());
    out += fmt::format("    values: {}\n", fmt::join(g.values, ", "));
    if (g.mapping) {
      out += fmt::format("    kernel {}: {}, {} B of ldm per core\n", g.kernel, g.mapping->str(), g.mapping->ldm_bytes);
    } else {
      out += fmt::format("    not fused: {}\n", g.not_fused);
    }
  }
  return out;
}

}  // namespace ldmsim
