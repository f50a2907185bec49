// Which layers of the model as loaded each op of the graph that ran stands for: itself for an op the fusion pass
// left alone (even when an unnamed op's label changed with its index), the members of a fused group or of a store
// fold. stats.json's "source_layers", by which `ldmsim compare` lines up runs with and without fusion.
#pragma once

#include <string>
#include <vector>

#include "ldmsim/session/model.hpp"

namespace ldmsim {

/// Per op of model.graph(), by index: the loaded graph's layer names (OpNode::layer) it runs.
std::vector<std::vector<std::string>> source_layers(const Model& model);

/// Adds each op entry of stats["ops"] its "source_layers" (entries are matched by their "index").
void add_source_layers(nlohmann::json& stats, const Model& model);

}  // namespace ldmsim
