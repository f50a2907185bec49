// Grouping: fusable ops are merged along their edges, in op order, while the merged set still has one frame and no
// path leaves it through an outside op and comes back (which would make the fused op depend on itself).
#include <algorithm>
#include <numeric>

#include "fusion_internal.hpp"

namespace ldmsim::fusion {

namespace {

class Groups {
 public:
  explicit Groups(const Graph& graph) : graph_(graph), parent_(graph.ops().size()), members_(graph.ops().size()) {
    std::iota(parent_.begin(), parent_.end(), 0);
    for (std::size_t o = 0; o < members_.size(); ++o) members_[o] = {o};
  }

  std::size_t find(std::size_t o) {
    while (parent_[o] != o) o = parent_[o] = parent_[parent_[o]];
    return o;
  }

  /// Merges the groups of a and b when the result is a valid group.
  void try_merge(std::size_t a, std::size_t b) {
    a = find(a), b = find(b);
    if (a == b) return;
    std::vector<std::size_t> merged;
    std::merge(members_[a].begin(), members_[a].end(), members_[b].begin(), members_[b].end(),
               std::back_inserter(merged));
    if (!group_frame(graph_, merged) || leaves_and_returns(merged)) return;
    parent_[b] = a;
    members_[a] = std::move(merged);
    members_[b].clear();
  }

  std::vector<std::vector<std::size_t>> result() {
    std::vector<std::vector<std::size_t>> out;
    for (std::size_t o = 0; o < members_.size(); ++o) {
      if (find(o) == o && members_[o].size() >= 2) out.push_back(members_[o]);
    }
    return out;
  }

 private:
  /// True when some op outside `set` is reachable from the set and reaches back into it. Other groups are
  /// contracted: reaching one of their ops reaches the successors of all of them (they run as one kernel).
  bool leaves_and_returns(const std::vector<std::size_t>& set) {
    const auto inside = [&](std::size_t o) { return std::binary_search(set.begin(), set.end(), o); };
    std::vector<char> seen(graph_.ops().size(), 0);
    std::vector<std::size_t> stack;
    for (std::size_t o : set) {
      for (std::size_t t : graph_.ops()[o].outputs) {
        for (std::size_t c : graph_.tensor(t).consumers) {
          if (!inside(c)) stack.push_back(c);
        }
      }
    }
    while (!stack.empty()) {
      const std::size_t o = stack.back();
      stack.pop_back();
      if (seen[o] != 0) continue;
      for (std::size_t m : members_[find(o)]) {
        seen[m] = 1;
        for (std::size_t t : graph_.ops()[m].outputs) {
          for (std::size_t c : graph_.tensor(t).consumers) {
            if (inside(c)) return true;
            if (seen[c] == 0) stack.push_back(c);
          }
        }
      }
    }
    return false;
  }

  const Graph& graph_;
  std::vector<std::size_t> parent_;
  std::vector<std::vector<std::size_t>> members_;
};

}  // namespace

std::vector<std::vector<std::size_t>> find_groups(const Graph& graph, const std::vector<char>& excluded) {
  Groups groups(graph);
  const auto fusable = [&](const OpNode& op) {
    return excluded[op.index] == 0 && form_of(op).kind != FusionForm::Kind::kNone;
  };
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
