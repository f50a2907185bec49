#include "ldmsim/session/model.hpp"

#include "ldmsim/graph/executor.hpp"

namespace ldmsim {

std::vector<std::string> Model::notes() const {
  std::vector<std::string> texts;
  for (const ImportNote& note : notes_) texts.push_back(note.text);
  return texts;
}

std::vector<TensorInfo> Model::inputs(bool with_constants) const {
  std::vector<TensorInfo> inputs;
  for (const TensorNode& t : graph().tensors()) {
    if (!t.is_input()) continue;
    const bool constant = t.init.constant.value_or(false);  // an ONNX initializer; a workload's inputs may all be given
    if (constant && !with_constants) continue;
    inputs.push_back({t.name, t.shape.dims_vector(), constant, t.dtype});
  }
  return inputs;
}

std::vector<TensorInfo> Model::outputs() const {
  std::vector<TensorInfo> outputs;
  for (const std::size_t t : graph().outputs()) {
    const TensorNode& node = graph().tensor(t);
    outputs.push_back({node.name, node.shape.dims_vector(), false, node.dtype});
  }
  return outputs;
}

std::string Model::describe() const {
  return (fused_ ? fused_->describe(*loaded_) : std::string()) + ldmsim::describe(graph(), plan());
}

std::uint64_t Model::host_memory_bound() const {
  return ldmsim::host_memory_bound(graph(), plan());
}

}  // namespace ldmsim
