// Grouping: fusable ops are merged along their edges, in op order, while the merged set still has one frame and no
// path leaves it through an outside op and comes back (which would make the fused op depend on itself).
//
// Each group keeps what decides a merge: its backbone frame, the broadcast shape of its outputs, the distinct dims of
// its tensors (a handful: each must be 1 or the frame's on every axis), its members and the consumers of its outputs.
// A merge joins the smaller group's lists into the larger's, so grouping a chain of n ops costs O(n log n), not the
// O(n^2) of re-checking every member at every merge.
#include <algorithm>
#include <numeric>
#include <set>

#include "fusion_internal.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim::fusion {

namespace {

/// A tensor of a group as the frame check sees it: its dims before alignment, and whether an op writes it.
using Operand = std::pair<std::vector<std::uint64_t>, bool>;

struct Group {
  std::vector<std::size_t> members;  // unsorted
  std::optional<FusionFrame> backbone;
  std::optional<Shape> broadcast;  // of the members' outputs
  std::set<Operand> operands;
  std::vector<std::size_t> consumers;  // ops reading a member's output; some may have joined the group since
  std::size_t last = 0;                // the largest member
};

bool same_frame(const FusionFrame& a, const FusionFrame& b) {
  return a.shape == b.shape && a.k_begin == b.k_begin && a.k_end == b.k_end;
}

/// A reduction without keepdims changes rank: nothing of its group may read its output.
bool drops_rank(const OpNode& op) {
  const FusionForm f = form_of(op);
  return f.kind == FusionForm::Kind::kReduce && !f.keepdims;
}

class Groups {
 public:
  explicit Groups(const Graph& graph) : graph_(graph), parent_(graph.ops().size()), groups_(graph.ops().size()) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }

  /// Makes op `o` a group of its own (a fusable op).
  void add(std::size_t o) {
    const OpNode& op = graph_.ops()[o];
    Group& g = groups_[o];
    g.members = {o};
    g.last = o;
    const FusionForm f = form_of(op);
    if (is_backbone(f)) g.backbone = backbone_frame(graph_, op, f);
    g.broadcast = graph_.tensor(op.outputs[0]).shape;
    for (std::size_t k = 0; k <= op.inputs.size(); ++k)
      g.operands.emplace(operand_dims(graph_, op, k), k == op.inputs.size());
    for (std::size_t c : graph_.tensor(op.outputs[0]).consumers) g.consumers.push_back(c);
  }

  std::size_t find(std::size_t o) {
    while (parent_[o] != o) o = parent_[o] = parent_[parent_[o]];
    return o;
  }

  /// Merges the groups of a and b when the result is a valid group.
  void try_merge(std::size_t a, std::size_t b) {
    a = find(a), b = find(b);
    if (a == b) return;
    const std::optional<FusionFrame> frame = merged_frame(groups_[a], groups_[b]);
    if (!frame || reads_dropped_rank(a, b) || leaves_and_returns(a, b)) return;
    if (groups_[a].members.size() < groups_[b].members.size()) std::swap(a, b);
    Group& into = groups_[a];
    Group& from = groups_[b];
    into.members.insert(into.members.end(), from.members.begin(), from.members.end());
    if (!into.backbone) into.backbone = from.backbone;
    into.broadcast = broadcast_shapes(*into.broadcast, *from.broadcast);
    into.operands.insert(from.operands.begin(), from.operands.end());
    into.consumers.insert(into.consumers.end(), from.consumers.begin(), from.consumers.end());
    into.last = std::max(into.last, from.last);
    from = Group{};
    parent_[b] = a;
  }

  std::vector<std::vector<std::size_t>> result() {
    std::vector<std::vector<std::size_t>> out;
    for (std::size_t o = 0; o < groups_.size(); ++o) {
      if (find(o) == o && groups_[o].members.size() >= 2) {
        std::vector<std::size_t> members = groups_[o].members;
        std::sort(members.begin(), members.end());
        out.push_back(std::move(members));
      }
    }
    return out;
  }

 private:
  /// The frame the union of two groups would have (what group_frame gives for their members), or none.
  static std::optional<FusionFrame> merged_frame(const Group& x, const Group& y) {
    if (x.backbone && y.backbone && !same_frame(*x.backbone, *y.backbone)) return std::nullopt;
    Shape broadcast;
    try {
      broadcast = broadcast_shapes(*x.broadcast, *y.broadcast);
    } catch (const ConfigError&) {
      return std::nullopt;
    }
    const auto all_propagate = [&](const FusionFrame& f) {
      const auto fits = [&](const Operand& o) { return operand_propagates(o.first, o.second, f); };
      return std::all_of(x.operands.begin(), x.operands.end(), fits) &&
             std::all_of(y.operands.begin(), y.operands.end(), fits);
    };
    if (const auto& backbone = x.backbone ? x.backbone : y.backbone) {
      return all_propagate(*backbone) ? backbone : std::nullopt;
    }
    for (std::size_t split = 0; split <= broadcast.rank(); ++split) {
      const FusionFrame f{broadcast, split, split};
      if (all_propagate(f)) return f;
    }
    return std::nullopt;
  }

  /// True when the union would read the output of a rank-dropping reduction of its own. Only edges between the two
  /// groups are new, so the smaller group's members' edges are enough.
  bool reads_dropped_rank(std::size_t a, std::size_t b) {
    if (groups_[a].members.size() > groups_[b].members.size()) std::swap(a, b);
    for (std::size_t m : groups_[a].members) {
      const OpNode& op = graph_.ops()[m];
      if (drops_rank(op)) {
        for (std::size_t c : graph_.tensor(op.outputs[0]).consumers) {
          if (find(c) == b) return true;
        }
      }
      for (std::size_t t : op.inputs) {
        const auto p = graph_.tensor(t).producer;
        if (p && drops_rank(graph_.ops()[*p]) && find(*p) == b) return true;
      }
    }
    return false;
  }

  /// True when some op outside both groups is reachable from `a` and reaches `b`. Other groups are contracted:
  /// reaching one of their ops reaches the successors of all of them (they run as one kernel). The contracted graph
  /// is acyclic and has an edge a -> b, so a path from b back to a cannot exist; a path from a to b through an
  /// outside op can only start at a consumer of a that is in neither group, and usually there is none.
  /// find_groups merges into the group of the op it is at, b's largest member, and ops after it are still alone:
  /// an edge only goes to a larger op, so a path that passes b's largest member never comes back to b.
  bool leaves_and_returns(std::size_t a, std::size_t b) {
    const std::size_t bound = groups_[b].last;
    std::vector<std::size_t>& consumers = groups_[a].consumers;
    std::erase_if(consumers, [&](std::size_t c) { return find(c) == a; });  // joined since: no longer outside
    std::vector<std::size_t> stack;
    for (std::size_t c : consumers) {
      if (find(c) != b) stack.push_back(c);
    }
    if (stack.empty()) return false;
    std::vector<char> seen(graph_.ops().size(), 0);
    while (!stack.empty()) {
      const std::size_t o = stack.back();
      stack.pop_back();
      if (seen[o] != 0 || o > bound) continue;
      const std::size_t root = find(o);
      if (root == b) return true;
      const std::vector<std::size_t> single{o};
      for (std::size_t m : groups_[root].members.empty() ? single : groups_[root].members) {
        seen[m] = 1;
        for (std::size_t t : graph_.ops()[m].outputs) {
          for (std::size_t c : graph_.tensor(t).consumers) {
            if (seen[c] == 0) stack.push_back(c);
          }
        }
      }
    }
    return false;
  }

  const Graph& graph_;
  std::vector<std::size_t> parent_;
  std::vector<Group> groups_;  // by root; empty for an op that is not fusable
};

}  // namespace

std::vector<std::vector<std::size_t>> find_groups(const Graph& graph, const std::vector<char>& excluded) {
  Groups groups(graph);
  const auto fusable = [&](const OpNode& op) {
    return excluded[op.index] == 0 && form_of(op).kind != FusionForm::Kind::kNone;
  };
  for (const OpNode& op : graph.ops()) {
    if (fusable(op)) groups.add(op.index);
  }
  for (const OpNode& op : graph.ops()) {
    if (!fusable(op)) continue;
    for (std::size_t t : op.inputs) {
      const auto p = graph.tensor(t).producer;
      if (p && fusable(graph.ops()[*p])) groups.try_merge(*p, op.index);
    }
  }
  return groups.result();
}

}  // namespace ldmsim::fusion
