// Tensor tags: what each tensor of a workload is (static tags, from the graph) and how the machine holds it
// (dynamic tags, from the plan): the vocabulary of the splitting and placement method, printed by `ldmsim plan`
// (docs/tags.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ldmsim/graph/graph.hpp"
#include "ldmsim/graph/plan.hpp"
#include "ldmsim/graph/split.hpp"

namespace ldmsim {

/// A tensor's category by its role and in/out degree.
enum class TensorCategory : std::uint8_t {
  kInputNeuron,     ///< data the model is given when it runs
  kOutputNeuron,    ///< data an op produces that leaves the model
  kHiddenNeuron,    ///< data an op produces for later ops only
  kConstantNeuron,  ///< constant data read as data (a constant addend)
  kInputWeight,     ///< ops' parameters given when the model runs
  kOutputWeight,    ///< parameters an op writes (training; no ldmsim op does)
  kConstantWeight,  ///< ops' parameters fixed in the model (weights, biases, normalisation statistics)
  kAuxiliary,       ///< anything else: recurrent layers' initial states, tensors no op reads
};
std::string_view to_string(TensorCategory category) noexcept;
/// Tensor `t`'s category in graph `g`, from its producer, its consumers' input roles and its init.
TensorCategory category_of(const Graph& g, std::size_t t);
/// Constant neurons and constant weights: values fixed in the model, known before it runs.
bool is_constant(TensorCategory category);
/// Tensor `t` of `g` has no producer and is a constant: its values are staged once and never change.
bool is_constant_tensor(const Graph& g, std::size_t t);

/// From the graph.
struct StaticTags {
  TensorCategory category = TensorCategory::kHiddenNeuron;
  std::string dtype = "fp16";  ///< as the workload declares it (fp32 values are rounded to fp16 when staged)
  std::vector<std::uint64_t> dims;
  /// Constants: the first values (all when few), their count, and how they are made ("data", "value", "uniform"
  /// or "normal" with its parameters).
  std::vector<float> values;
  std::uint64_t value_count = 0;
  std::string values_from;
};

/// One piece of a split tensor: inclusive index ranges along the split dimension, and where it is stored.
struct TensorPiece {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::string store;
};

/// From the machine and the plan.
struct DynamicTags {
  std::string device_dtype = "fp16";
  std::string order = "-";      ///< the kernel's view, e.g. "nchw", "nc" (a matrix); "-" never in main memory
  std::string tiling = "none";  ///< kernels choose tiles from the free ldm when they run
  PaddingPlan padding;          ///< the resident layout (the producer's, or staging's for an input)
  std::uint64_t bytes = 0;      ///< after padding
  std::string split_dim;        ///< empty: not split
  std::vector<TensorPiece> pieces;
  std::string store = "none";   ///< "mem0": core group 0's memory; "ldm": only inside a fused kernel; "none"
  std::string exchange = "no";  ///< "no", "cg" (between core groups) or "core"
  std::size_t relayouts = 0;    ///< device copies into other layouts that consumers want
  std::string split_padding;    ///< the split's rounding padding (and the plan's), when it pads
};

struct TensorTags {
  std::string name;
  StaticTags fixed;
  DynamicTags dynamic;
  /// "static:..." and "dynamic:..." in the method's text form.
  std::string static_text() const;
  std::string dynamic_text() const;
  nlohmann::json to_json() const;
};

/// The tags of every tensor of `original` (the workload as loaded). `planned` is the graph that runs (after
/// fusion, or `original` itself) and `plan` its execution plan; tensors that fusion keeps inside one kernel are
/// stored in ldm only.
/// With `split` (plan_split of `planned`), split tensors show their pieces and homes, reduced outputs their core
/// group, and tensors that must move between groups the exchange.
std::vector<TensorTags> tensor_tags(const Graph& original, const Graph& planned, const ExecutionPlan& plan,
                                    const SplitPlan* split = nullptr);

}  // namespace ldmsim
