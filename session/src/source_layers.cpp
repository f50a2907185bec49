// The loaded layers behind each op that ran (see source_layers.hpp).
#include "source_layers.hpp"

#include <map>

#include "ldmsim/graph/fusion.hpp"

namespace ldmsim {

std::vector<std::vector<std::string>> source_layers(const Model& model) {
  const Graph& ran = model.graph();
  const Graph& loaded = model.loaded_graph();
  const FusedGraph* fused = model.fusion();
  std::map<std::string, std::vector<std::size_t>> members;  // a fused or folded op's label -> loaded op indices
  if (fused != nullptr) {
    for (const FusionGroup& g : fused->groups) {
      if (!g.kernel.empty()) members[g.kernel] = g.ops;
    }
    for (const StoreFold& f : fused->folds) {
      std::vector<std::size_t>& ops = members[f.kernel];
      ops.push_back(f.op);
      if (f.add) ops.push_back(*f.add);
      if (f.activation) ops.push_back(*f.activation);
    }
  }
  std::vector<std::vector<std::string>> out;
  for (const OpNode& op : ran.ops()) {
    std::vector<std::string>& names = out.emplace_back();
    if (fused == nullptr) {
      names.push_back(op.layer());
    } else if (const auto it = members.find(op.label()); it != members.end()) {
      for (const std::size_t o : it->second) names.push_back(loaded.ops()[o].layer());
    } else if (const auto t = op.outputs.empty() ? std::nullopt : loaded.find(ran.tensor(op.outputs.front()).name);
               t && loaded.tensor(*t).producer) {
      names.push_back(loaded.ops()[*loaded.tensor(*t).producer].layer());  // the pass kept its output tensor's name
    } else {
      names.push_back(op.layer());
    }
  }
  return out;
}

void add_source_layers(nlohmann::json& stats, const Model& model) {
  const std::vector<std::vector<std::string>> names = source_layers(model);
  for (nlohmann::json& op : stats.at("ops")) {
    const auto index = op.at("index").get<std::size_t>();
    if (index < names.size()) op["source_layers"] = names[index];
  }
}

}  // namespace ldmsim
