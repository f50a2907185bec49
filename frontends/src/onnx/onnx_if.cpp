// If whose condition is known at import (PyTorch exports a Python `if` on a shape as If, e.g. local_response_norm's
// `if dim == 3`): the import goes on with the branch taken, its nodes inlined where the If stood and its outputs
// named as the If's by Identity nodes. A condition computed at run time is refused (the device has no branches).
#include "onnx_if.hpp"

#include <fmt/format.h>

namespace ldmsim::onnx_import {

void reserve_subgraph_names(const onnx::NodeProto& node, std::set<std::string>& names) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    const auto reserve = [&](const onnx::GraphProto& g) {
      for (const onnx::NodeProto& inner : g.node()) {
        names.insert(inner.output().begin(), inner.output().end());
        reserve_subgraph_names(inner, names);
      }
    };
    if (a.type() == onnx::AttributeProto::GRAPH) reserve(a.g());
    for (const onnx::GraphProto& g : a.graphs()) reserve(g);
  }
}

std::optional<InlinedBranch> taken_branch(const onnx::NodeProto& node, Context& ctx, std::vector<std::string>& why) {
  if (node.op_type() != "If" || (!node.domain().empty() && node.domain() != "ai.onnx") || node.input_size() != 1) {
    return std::nullopt;
  }
  const auto c = ctx.constants.find(resolve(ctx, node.input(0)));
  if (c == ctx.constants.end() || !decode(c->second)) return std::nullopt;  // refused when translated
  if (c->second.values.size() != 1) {
    why.push_back(fmt::format("the condition has {} values, expected one", c->second.values.size()));
    return std::nullopt;
  }
  const bool then = c->second.values[0] != 0.0;
  const char* name = then ? "then_branch" : "else_branch";
  const onnx::GraphProto* branch = nullptr;
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name && a.type() == onnx::AttributeProto::GRAPH) branch = &a.g();
  }
  if (branch == nullptr) {
    why.push_back(fmt::format("has no {} graph", name));
    return std::nullopt;
  }
  if (branch->initializer_size() > 0) why.push_back(fmt::format("its {} has initializers (not supported)", name));
  if (branch->output_size() != node.output_size()) {
    why.push_back(
        fmt::format("its {} has {} outputs for the node's {}", name, branch->output_size(), node.output_size()));
  }
  if (!why.empty()) return std::nullopt;
  InlinedBranch out;
  for (const onnx::NodeProto& inner : branch->node()) out.nodes.push_back(&inner);
  for (int k = 0; k < node.output_size(); ++k) {
    if (node.output(k).empty()) continue;
    onnx::NodeProto identity;
    identity.set_op_type("Identity");
    identity.set_name(fmt::format("{}/{}", node.name(), name));
    identity.add_input(branch->output(k).name());
    identity.add_output(node.output(k));
    out.outputs.push_back(std::move(identity));
  }
  return out;
}

}  // namespace ldmsim::onnx_import
