// Private: If nodes whose condition is a constant at import, inlined (see onnx_if.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx_nodes.hpp"

namespace ldmsim::onnx_import {

/// The branch an If takes: its nodes (owned by the model) and one Identity per output naming the branch's output
/// as the If's.
struct InlinedBranch {
  std::vector<const onnx::NodeProto*> nodes;
  std::vector<onnx::NodeProto> outputs;
};

/// The branch `node` takes when it is an If whose condition is a constant, else nullopt; `why` gets the problems of
/// an If that cannot be inlined (a branch with initializers, output counts that differ).
std::optional<InlinedBranch> taken_branch(const onnx::NodeProto& node, Context& ctx, std::vector<std::string>& why);

/// Adds the outputs of every node in `node`'s subgraphs (If branches, Loop bodies), at any depth, to `names`.
void reserve_subgraph_names(const onnx::NodeProto& node, std::set<std::string>& names);

}  // namespace ldmsim::onnx_import
