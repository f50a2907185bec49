// What the fusion pass's contractions (groups, store folds, view chains) share: a fresh graph with the original's
// inputs, and the names of what they contract.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fusion_internal.hpp"

namespace ldmsim::fusion {

Graph inputs_of(const Graph& graph) {
  Graph out;
  out.name = graph.name;
  out.arch = graph.arch;
  out.staging = graph.staging;
  out.set_registry(graph.shared_registry());
  for (const TensorNode& t : graph.tensors()) {
    if (t.is_input()) out.add_input(t.name, t.shape, t.init, t.dtype);
  }
  return out;
}

std::vector<std::string> tensor_names(const Graph& graph, const std::vector<std::size_t>& tensors) {
  std::vector<std::string> v;
  for (std::size_t t : tensors) v.push_back(graph.tensor(t).name);
  return v;
}

std::string joined_name(const Graph& graph, const std::vector<std::size_t>& ops) {
  std::vector<std::string> names;
  for (std::size_t o : ops) names.push_back(graph.ops()[o].layer());
  std::string joined = fmt::format("{}", fmt::join(names, "+"));
  if (joined.size() > 160) joined = fmt::format("{}+...+{} ({} ops)", names.front(), names.back(), names.size());
  return joined;
}

}  // namespace ldmsim::fusion
