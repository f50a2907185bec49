// The fusion pass's driver: folds into stores, groups, their mappings, and the fused graph (each fused group one op,
// each fold the producer rebound with what folds into it, placed in a topological order of the contracted graph that
// keeps the original order where it can).
#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <unordered_map>

#include "fusion_internal.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

namespace {

/// A node of the contracted graph: an unfused op, a fused group, or an op with ops folded into its store.
struct Node {
  std::vector<std::size_t> ops;
  std::optional<std::size_t> group;  // index into the fused groups
  std::optional<std::size_t> fold;   // index into the folds (ops: the producer, then what folds into it, in order)
};

/// The fold's ops in order: the producer, the add, the activation.
std::vector<std::size_t> fold_ops(const StoreFold& f) {
  std::vector<std::size_t> ops{f.op};
  if (f.add) ops.push_back(*f.add);
  if (f.activation) ops.push_back(*f.activation);
  return ops;
}

/// Ops that fold into the store of a conv, gemm, matmul or fc (docs/fusion.md § Folds into the store): an add of a
/// residual of the output's shape (conv), then a relu or clip. Each folded op is the only reader of the value before
/// it, which is no graph output (so that value is never needed). The producer is bound again from its attributes:
/// one added already bound without them is left alone.
std::vector<StoreFold> plan_folds(const Graph& graph) {
  const auto role = [&](const OpNode& op) {
    const OperatorKind* kind = graph.registry().find(op.type);
    return kind == nullptr ? StoreFoldRole::kNone : kind->traits().store_fold;
  };
  const auto sole_reader = [&](std::size_t t) -> const OpNode* {
    const TensorNode& n = graph.tensor(t);
    return n.is_output || n.consumers.size() != 1 ? nullptr : &graph.ops()[n.consumers[0]];
  };
  std::vector<StoreFold> folds;
  std::vector<char> claimed(graph.ops().size(), 0);  // an add both of whose inputs are convs folds into the first
  for (const OpNode& p : graph.ops()) {
    if (p.outputs.size() != 1 || !p.attrs.is_object()) continue;
    StoreFold f{.op = p.index};
    std::size_t value = p.outputs[0];  // what the store writes so far
    const bool residual = p.bound->folds_residual(), bias = p.bound->folds_bias();
    const OpNode* add = residual || bias ? sole_reader(value) : nullptr;
    if (add != nullptr && claimed[add->index] == 0 && role(*add) == StoreFoldRole::kResidualAdd &&
        add->inputs.size() == 2 && add->inputs[0] != add->inputs[1]) {
      const std::size_t skip = add->inputs[0] == value ? 1 : 0;
      // Not one of the op's own inputs, which it wants laid out otherwise (an op gets one copy of a tensor it reads
      // twice). A residual has the output's shape (no broadcast); a bias is a vector over the output's last axis.
      const bool own_input = std::find(p.inputs.begin(), p.inputs.end(), add->inputs[skip]) != p.inputs.end();
      const Shape& other = graph.tensor(add->inputs[skip]).shape;
      const Shape& out = graph.tensor(value).shape;
      const bool fits = residual ? other == out
                                 : out.rank() > 0 && other.rank() > 0 && other.rank() <= out.rank() &&
                                       other[other.rank() - 1] == out[out.rank() - 1] &&
                                       other.elements() == out[out.rank() - 1];
      if (!own_input && fits) {
        f.add = add->index;
        f.bias = bias;
        f.residual_first = skip == 0;
        value = add->outputs[0];
      }
    }
    const OpNode* act = p.bound->folds_activation() ? sole_reader(value) : nullptr;
    if (act != nullptr && role(*act) == StoreFoldRole::kActivation && act->inputs.size() == 1) {
      f.activation = act->index;
    }
    if (!f.add && !f.activation) continue;
    for (std::size_t o : fold_ops(f)) claimed[o] = 1;
    folds.push_back(f);
  }
  return folds;
}

/// The producer's attributes with "residual" and "activation" set from what folds into it (clip's own attributes
/// are its bounds).
nlohmann::json folded_attrs(const Graph& graph, const StoreFold& f) {
  nlohmann::json attrs = graph.ops()[f.op].attrs;
  if (f.add) attrs[f.bias ? "bias" : "residual"] = f.residual_first ? "before" : "after";
  if (f.activation) {
    const OpNode& activation = graph.ops()[*f.activation];
    nlohmann::json folded = activation.attrs.is_object() ? activation.attrs : nlohmann::json::object();
    folded["type"] = activation.type;
    attrs["activation"] = std::move(folded);
  }
  return attrs;
}

/// `folded` becomes the fused graph; the kernels the report names keep their meaning (`labels`: each op's label in
/// `folded`, empty for a dropped op, which names no kernel).
std::unordered_map<std::string, std::string> take_folded(FusedGraph& result, Graph folded,
                                                         const std::vector<std::string>& labels) {
  std::unordered_map<std::string, std::string> renamed;
  for (const OpNode& op : result.graph.ops()) renamed.emplace(op.label(), labels[op.index]);
  const auto rename = [&](std::string& kernel) {
    if (!kernel.empty()) kernel = renamed.at(kernel);
  };
  for (FusionGroup& g : result.groups) rename(g.kernel);
  for (StoreFold& f : result.folds) rename(f.kernel);
  result.graph = std::move(folded);
  return renamed;
}

/// Folds the fused graph's view chains, then the views around attention kernels. The reports name the ops of the
/// graph given to fuse() (`original`: a single op's label in the fused graph -> its label there); an absorbed chain
/// is named by its ops joined with "+".
void fold_views(FusedGraph& result, std::unordered_map<std::string, std::string> original) {
  const auto named = [&](const std::string& label) {
    const auto it = original.find(label);
    return it == original.end() ? label : it->second;
  };
  std::vector<std::string> labels;
  Graph chains = fusion::fold_view_chains(result.graph, result.view_chains, labels);
  if (!result.view_chains.empty()) {
    std::unordered_map<std::string, std::string> next;  // the same, for the graph with the chains folded
    for (const OpNode& op : result.graph.ops()) {
      if (!labels[op.index].empty()) next[labels[op.index]] = named(op.label());
    }
    for (ViewChainFold& v : result.view_chains) {
      for (std::string& op : v.ops) op = named(op);
      next[v.kernel] = fmt::format("{}", fmt::join(v.ops, "+"));
    }
    original = std::move(next);
    take_folded(result, std::move(chains), labels);
  }
  Graph attention = fusion::fold_views_into_attention(result.graph, result.attention_views, labels);
  if (result.attention_views.empty()) return;
  for (AttentionViewFold& a : result.attention_views) {
    for (std::string& op : a.ops) op = named(op);
  }
  const auto renamed = take_folded(result, std::move(attention), labels);
  for (ViewChainFold& v : result.view_chains) {  // a chain's view op an attention kernel absorbed names that kernel
    if (const std::string& now = renamed.at(v.kernel); !now.empty()) {
      v.kernel = now;
      continue;
    }
    const std::string joined = fmt::format("{}", fmt::join(v.ops, "+"));
    for (const AttentionViewFold& a : result.attention_views) {
      if (std::find(a.ops.begin(), a.ops.end(), joined) != a.ops.end()) v.kernel = a.kernel;
    }
  }
}

/// Reshapes whose input is read after them stop copying (fusion::reshape_back); every kernel label the report
/// names moves with its op.
void reshape_back(FusedGraph& result) {
  std::vector<std::string> labels;
  Graph back = fusion::reshape_back(result.graph, labels);
  if (back.ops().empty()) return;
  const auto renamed = take_folded(result, std::move(back), labels);
  for (ViewChainFold& v : result.view_chains) {
    if (const auto it = renamed.find(v.kernel); it != renamed.end()) v.kernel = it->second;
  }
  for (AttentionViewFold& a : result.attention_views) a.kernel = renamed.at(a.kernel);
}

}  // namespace

FusedGraph fuse(const Graph& graph, const Arch& arch, StagingPolicy policy, const FusionOptions& options) {
  FusedGraph result;
  std::vector<fusion::LoweredGroup> lowered;
  std::vector<std::optional<std::size_t>> group_of(graph.ops().size());  // op -> index into lowered
  result.folds = plan_folds(graph);
  std::vector<std::optional<std::size_t>> fold_of(graph.ops().size());  // op -> index into result.folds
  std::vector<char> folded(graph.ops().size(), 0);                      // ops that fold into a producer
  for (std::size_t i = 0; i < result.folds.size(); ++i) {
    for (std::size_t o : fold_ops(result.folds[i])) fold_of[o] = i, folded[o] = o != result.folds[i].op ? 1 : 0;
  }
  std::vector<char> in_fold(graph.ops().size(), 0);
  for (std::size_t o = 0; o < graph.ops().size(); ++o) in_fold[o] = fold_of[o] ? 1 : 0;
  std::vector<std::vector<std::size_t>> candidates = fusion::find_groups(graph, folded);
  {
    // Lone ops that are candidates too: a softmax alone between two products (attention without a mask) may join
    // them; a LayerNorm runs better as a fused kernel (below).
    std::vector<char> grouped(graph.ops().size(), 0);
    for (const auto& ops : candidates) {
      for (std::size_t o : ops) grouped[o] = 1;
    }
    for (const OpNode& op : graph.ops()) {
      if (grouped[op.index] || in_fold[op.index] || folded[op.index]) continue;
      if ((options.attention && op.type == "softmax") || fusion::form_of(op).kind == FusionForm::Kind::kLayerNorm) {
        candidates.push_back({op.index});
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto& a, const auto& b) { return a.front() < b.front(); });
  }
  for (const auto& ops : candidates) {
    FusionGroup g;
    g.ops = ops;
    fusion::FrameChoice choice = fusion::choose_frame(graph, ops, g.backbones, arch, policy, options.cores);
    g.frame = choice.frame;
    g.mapping = choice.mapping;
    fusion::LoweredGroup low = std::move(choice.low);
    // A lone op is a candidate only for an attention kernel, or a LayerNorm (the fused kernel pipelines its rows and
    // reads the scale and bias once per group where its own kernel reads them on every core): otherwise it runs as
    // it is.
    if (ops.size() == 1) {
      const bool layer_norm = fusion::form_of(graph.ops()[ops[0]]).kind == FusionForm::Kind::kLayerNorm;
      if (!g.mapping || (!layer_norm && !fusion::match_attention(graph, low, in_fold, arch, policy))) continue;
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
  // Groups between two batched products run with them in one kernel; a product joins one group at most.
  std::vector<std::optional<fusion::AttentionMatch>> attention(lowered.size());
  if (options.attention) {
    std::vector<char> claimed(graph.ops().size(), 0);
    for (std::size_t g = 0; g < lowered.size(); ++g) {
      auto match = fusion::match_attention(graph, lowered[g], in_fold, arch, policy);
      if (!match || std::any_of(match->ops.begin(), match->ops.end(), [&](std::size_t o) { return claimed[o] != 0; })) {
        continue;
      }
      for (std::size_t o : match->ops) {
        claimed[o] = 1;
        group_of[o] = g;
      }
      attention[g] = std::move(match);
    }
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
    if (const auto f = fold_of[op.index]) {  // the producer comes first: ops are in a topological order
      const StoreFold& fold = result.folds[*f];
      if (op.index == fold.op) {
        node_of[op.index] = nodes.size();
        nodes.push_back({fold_ops(fold), std::nullopt, *f});
      } else {
        node_of[op.index] = node_of[fold.op];
      }
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
  out = fusion::inputs_of(graph);
  const auto names = [&](const std::vector<std::size_t>& tensors) { return fusion::tensor_names(graph, tensors); };
  std::size_t emitted = 0;
  std::unordered_map<std::string, std::string> original;  // a single op's label in `out` -> in `graph`
  while (!ready.empty()) {
    const std::size_t n = ready.top();
    ready.pop();
    ++emitted;
    if (const auto g = nodes[n].group) {
      const fusion::LoweredGroup& low = lowered[*g];
      FusionGroup& report = result.groups[fused_group_index[*g]];
      if (const auto& m = attention[*g]) {
        const std::size_t index =
            out.add_bound_op("attention", names(m->inputs), names({m->output}),
                             fusion::bind_attention(graph, low, *m, arch.name), fusion::joined_name(graph, m->ops));
        report.kernel = out.ops()[index].label();
        report.attention =
            fmt::format("with {} (scores){} and {} (output): {}", graph.ops()[m->first].label(),
                        m->scaling ? fmt::format(", {} (scales Q)", graph.ops()[*m->scaling].label()) : std::string(),
                        graph.ops()[m->second].label(), m->mapping.str());
      } else {
        const std::size_t index =
            out.add_bound_op("fused", names(low.inputs), names(low.outputs),
                             low.bind(graph, *report.mapping, arch.name, policy), fusion::joined_name(graph, low.ops));
        report.kernel = out.ops()[index].label();
      }
    } else if (const auto f = nodes[n].fold) {
      StoreFold& fold = result.folds[*f];
      const OpNode& producer = graph.ops()[fold.op];
      std::vector<std::string> inputs = names(producer.inputs);
      if (fold.add) inputs.push_back(graph.tensor(graph.ops()[*fold.add].inputs[fold.residual_first ? 0 : 1]).name);
      const nlohmann::json attrs = folded_attrs(graph, fold);
      const std::size_t index =
          out.add_op(graph.registry(), producer.type, inputs, names(graph.ops()[nodes[n].ops.back()].outputs),
                     JsonField(attrs, "the fusion pass's store fold"), fusion::joined_name(graph, nodes[n].ops));
      fold.kernel = out.ops()[index].label();
    } else {
      const OpNode& op = graph.ops()[nodes[n].ops[0]];
      const std::size_t index =
          out.add_bound_op(op.type, names(op.inputs), names(op.outputs), op.bound, op.name, op.attrs);
      original[out.ops()[index].label()] = op.label();
    }
    for (std::size_t s : successors[n]) {
      if (--pending[s] == 0) ready.push(s);
    }
  }
  if (emitted != nodes.size()) throw std::logic_error("fusion: the contracted graph has a cycle");
  for (std::size_t t : graph.outputs()) out.mark_output(graph.tensor(t).name);
  // Naive staging pads inside rows: views are read element by element and reshapes of differently padded tensors
  // cannot hand their buffer over, so neither rewrite pays there.
  if (options.view_chains && policy != StagingPolicy::kNaive) fold_views(result, std::move(original));
  if (options.reshape_back && policy != StagingPolicy::kNaive) reshape_back(result);
  // Heads side by side pay only where a split can give each core group its own heads.
  if (options.head_major && options.view_chains && policy != StagingPolicy::kNaive && arch.core_groups > 1) {
    Graph reordered = fusion::head_major_projections(result.graph, result.head_major);
    if (!reordered.ops().empty()) result.graph = std::move(reordered);
  }
  return result;
}

std::string FusedGraph::describe(const Graph& original) const {
  std::string out = fmt::format(
      "fusion: {} candidate group{}, {} fused; {} residual add{}, {} bias add{} and {} activation{} folded into a "
      "store\n",
      groups.size(), groups.size() == 1 ? "" : "s",
      std::count_if(groups.begin(), groups.end(), [](const FusionGroup& g) { return g.mapping.has_value(); }),
      residual_folds(), residual_folds() == 1 ? "" : "s", bias_folds(), bias_folds() == 1 ? "" : "s",
      activation_folds(), activation_folds() == 1 ? "" : "s");
  for (const StoreFold& f : folds) {
    std::vector<std::string> ops;
    for (std::size_t o : fold_ops(f)) ops.push_back(original.ops()[o].label());
    out += fmt::format("  folded into {}'s store: {} (kernel {})\n", ops.front(),
                       fmt::join(ops.begin() + 1, ops.end(), ", "), f.kernel);
  }
  for (const ViewChainFold& v : view_chains) {
    if (v.kernel.rfind("view#", 0) == 0) {
      out += fmt::format("  view chain {}: {} copied once, as one strided view\n", v.kernel, fmt::join(v.ops, ", "));
    } else {
      out += fmt::format("  view chain {}: read in place by {}\n", fmt::join(v.ops, ", "), v.kernel);
    }
  }
  for (const AttentionViewFold& v : attention_views) {
    std::vector<std::string> ops;
    for (std::size_t i = 0; i < v.ops.size(); ++i) ops.push_back(fmt::format("{} ({})", v.ops[i], v.roles[i]));
    out += fmt::format("  attention kernel {} reads and writes in place what these would have copied: {}\n", v.kernel,
                       fmt::join(ops, ", "));
  }
  for (const HeadMajorFold& h : head_major) {
    out += fmt::format(
        "  attention kernel {} reads its {} heads side by side: {}'s weight and bias columns ordered by "
        "head (q, k and v of each head together)\n",
        h.kernel, h.heads, h.projection);
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
    if (!g.attention.empty()) {
      out += fmt::format("    attention kernel {}: {}\n", g.kernel, g.attention);
    } else if (g.mapping) {
      out += fmt::format("    kernel {}: {}, {} B of ldm per core\n", g.kernel, g.mapping->str(), g.mapping->ldm_bytes);
    } else {
      out += fmt::format("    not fused: {}\n", g.not_fused);
    }
  }
  return out;
}

}  // namespace ldmsim

namespace ldmsim {

std::size_t FusedGraph::activation_folds() const {
  return static_cast<std::size_t>(
      std::count_if(folds.begin(), folds.end(), [](const StoreFold& f) { return f.activation.has_value(); }));
}

std::size_t FusedGraph::residual_folds() const {
  return static_cast<std::size_t>(
      std::count_if(folds.begin(), folds.end(), [](const StoreFold& f) { return f.add.has_value() && !f.bias; }));
}

std::size_t FusedGraph::bias_folds() const {
  return static_cast<std::size_t>(
      std::count_if(folds.begin(), folds.end(), [](const StoreFold& f) { return f.add.has_value() && f.bias; }));
}

}  // namespace ldmsim
