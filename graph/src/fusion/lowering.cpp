// Lowering a group to a fused program: external inputs become loaded values, each op becomes steps (softmax,
// layer_norm and batch normalisation as their reductions and point-wise parts), external outputs are the values
// that some outside op or the graph's outputs read. The fused op's reference composes the members' references.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "fusion_internal.hpp"
#include "ldmsim/kernels/exp_floats.hpp"

namespace ldmsim::fusion {

namespace {

using Fn = std::function<float(float, float)>;

float add(float a, float b) {
  return a + b;
}
float sub(float a, float b) {
  return a - b;
}
float mul(float a, float b) {
  return a * b;
}
float div(float a, float b) {
  return a / b;
}
float exp1(float a, float) {
  return exp_float(a);
}

using Run = std::function<void(const float*, std::size_t, const float*, std::size_t, float*, std::size_t)>;

/// F over a run of elements (FusedStep::run; steps of 0 or 1): the same calls as element by element, without a
/// std::function call for each.
template <float (*F)(float, float)>
void run_each(const float* a, std::size_t a_step, const float* b, std::size_t b_step, float* y, std::size_t n) {
  const float zero = 0.0f;
  if (b == nullptr) b = &zero, b_step = 0;
  const auto each = [&]<std::size_t A, std::size_t B>() {
    for (std::size_t j = 0; j < n; ++j) y[j] = F(a[j * A], b[j * B]);
  };
  if (a_step == 1 && b_step == 1) return each.template operator()<1, 1>();
  if (a_step == 1) return each.template operator()<1, 0>();
  if (b_step == 1) return each.template operator()<0, 1>();
  return each.template operator()<0, 0>();
}

/// exp1 over a run: a run of its own, in exp_floats' vector loop (the same bits as exp1 element by element).
void run_exp(const float* a, std::size_t a_step, const float*, std::size_t, float* y, std::size_t n) {
  if (a_step == 1) return exp_floats(a, y, n);
  for (std::size_t j = 0; j < n; ++j) y[j] = exp1(a[0], 0.0f);
}

class Lowering {
 public:
  Lowering(const Graph& graph, const std::vector<std::size_t>& ops, const FusionFrame& frame)
      : graph_(graph), ops_(ops), frame_(frame) {
    group_.program.frame = frame;
    group_.ops = ops;
  }

  LoweredGroup run() {
    for (std::size_t o : ops_) lower(graph_.ops()[o]);
    for (std::size_t o : ops_) {
      const std::size_t t = graph_.ops()[o].outputs[0];
      const TensorNode& node = graph_.tensor(t);
      const bool read_outside = std::any_of(node.consumers.begin(), node.consumers.end(), [&](std::size_t c) {
        return !std::binary_search(ops_.begin(), ops_.end(), c);
      });
      if (node.is_output || read_outside) {
        group_.outputs.push_back(t);
        group_.program.outputs.push_back(produced_.at(t));
      }
    }
    return std::move(group_);
  }

 private:
  std::size_t new_value(std::string name, std::vector<std::uint64_t> dims) {
    FusedValue v{std::move(name), std::move(dims)};
    v.k = frame_.k() > 1 && block(v.dims, frame_.k_begin, frame_.k_end) > 1;
    v.i = frame_.i() > 1 && block(v.dims, frame_.k_end, v.dims.size()) > 1;
    group_.program.values.push_back(std::move(v));
    return group_.program.values.size() - 1;
  }

  static std::uint64_t block(const std::vector<std::uint64_t>& dims, std::size_t from, std::size_t to) {
    std::uint64_t n = 1;
    for (std::size_t a = from; a < to; ++a) n *= dims[a];
    return n;
  }

  /// The value operand k of op reads: the group's value of an inside tensor, or a loaded external one.
  std::size_t operand(const OpNode& op, std::size_t k) {
    const std::size_t t = op.inputs[k];
    if (const auto it = produced_.find(t); it != produced_.end()) return it->second;
    const auto dims = *aligned_dims(graph_, op, k, frame_.shape.rank());
    const auto key = std::make_pair(t, dims);
    if (const auto it = loaded_.find(key); it != loaded_.end()) return it->second;
    const std::size_t v = new_value(graph_.tensor(t).name, dims);
    loaded_.emplace(key, v);
    group_.inputs.push_back(t);
    group_.program.inputs.push_back(v);
    return v;
  }

  std::vector<std::uint64_t> dims_of(std::size_t v) const { return group_.program.values[v].dims; }
  std::vector<std::uint64_t> without_k(std::size_t v) const {
    auto d = dims_of(v);
    for (std::size_t a = frame_.k_begin; a < frame_.k_end; ++a) d[a] = 1;
    return d;
  }
  std::vector<std::uint64_t> joint(std::size_t a, std::size_t b) const {
    auto d = dims_of(a);
    const auto e = dims_of(b);
    for (std::size_t x = 0; x < d.size(); ++x) d[x] = std::max(d[x], e[x]);
    return d;
  }

  std::size_t point(const std::string& name, Fn fn, std::uint64_t flops, std::size_t a,
                    std::optional<std::size_t> b = std::nullopt, Run run = {}) {
    const std::size_t r = new_value(name, b ? joint(a, *b) : dims_of(a));
    FusedStep s{
        .kind = FusedStep::Kind::kPointwise, .fn = std::move(fn), .run = std::move(run), .flops = flops, .result = r};
    s.args = b ? std::vector<std::size_t>{a, *b} : std::vector<std::size_t>{a};
    group_.program.steps.push_back(std::move(s));
    return r;
  }

  /// A step of one of this file's arithmetic functions, with its loop over a run.
  template <float (*F)(float, float)>
  std::size_t arith(const std::string& name, std::uint64_t flops, std::size_t a,
                    std::optional<std::size_t> b = std::nullopt) {
    return point(name, F, flops, a, b, run_each<F>);
  }

  std::size_t reduce(const std::string& name, ReduceMode mode, std::size_t a) {
    const std::size_t r = new_value(name, without_k(a));
    group_.program.steps.push_back(FusedStep{.kind = FusedStep::Kind::kReduce, .mode = mode, .args = {a}, .result = r});
    return r;
  }

  void lower(const OpNode& op) {
    const FusionForm f = form_of(op);
    const std::string name = graph_.tensor(op.outputs[0]).name;
    std::size_t y = 0;
    switch (f.kind) {
      case FusionForm::Kind::kPointwise: {
        const std::size_t a = operand(op, 0);  // operands in order: values are numbered as the op reads them
        y = op.inputs.size() == 2 ? point(name, f.fn, f.flops, a, operand(op, 1)) : point(name, f.fn, f.flops, a);
        group_.program.steps.back().run = f.run;  // the op's own loop over a run, where it has one
        break;
      }
      case FusionForm::Kind::kReduce:
        y = reduce(name, f.mode, operand(op, 0));
        break;
      case FusionForm::Kind::kSoftmax: {
        const std::size_t x = operand(op, 0);
        const std::size_t max = reduce(name + ".max", ReduceMode::kMax, x);
        const std::size_t e =
            point(name + ".exp", exp1, 4, arith<sub>(name + ".shifted", 1, x, max), std::nullopt, run_exp);
        y = arith<div>(name, 1, e, reduce(name + ".sum", ReduceMode::kSum, e));
        break;
      }
      case FusionForm::Kind::kLayerNorm: {
        const std::size_t x = operand(op, 0);
        const std::size_t mean = reduce(name + ".mean", ReduceMode::kMean, x);
        const std::size_t d = arith<sub>(name + ".centred", 1, x, mean);
        const std::size_t var = reduce(name + ".var", ReduceMode::kMean, arith<mul>(name + ".squares", 1, d, d));
        const float eps = f.epsilon;
        const std::size_t inv = point(
            name + ".inv_std", [eps](float v, float) { return 1.0f / std::sqrt(v + eps); }, 4, var);
        const std::size_t normal = arith<mul>(name + ".normal", 1, d, inv);
        const std::size_t scale = operand(op, 1);
        y = arith<mul>(op.inputs.size() == 3 ? name + ".scaled" : name, 1, normal, scale);
        if (op.inputs.size() == 3) {
          const std::size_t bias = operand(op, 2);
          y = arith<add>(name, 1, y, bias);
        }
        break;
      }
      case FusionForm::Kind::kBatchNorm: {
        const float eps = f.epsilon;
        const std::size_t x = operand(op, 0), scale = operand(op, 1), bias = operand(op, 2);
        const std::size_t mean = operand(op, 3), var = operand(op, 4);
        const std::size_t inv = point(
            name + ".inv_std", [eps](float v, float) { return 1.0f / std::sqrt(v + eps); }, 4, var);
        const std::size_t d = arith<sub>(name + ".centred", 1, x, mean);
        const std::size_t normal = arith<mul>(name + ".normal", 1, d, inv);
        y = arith<add>(name, 1, arith<mul>(name + ".scaled", 1, normal, scale), bias);
        break;
      }
      case FusionForm::Kind::kNone:
        break;
    }
    produced_[op.outputs[0]] = y;
  }

  const Graph& graph_;
  const std::vector<std::size_t>& ops_;
  FusionFrame frame_;
  LoweredGroup group_;
  std::map<std::size_t, std::size_t> produced_;  // inside tensor -> value
  std::map<std::pair<std::size_t, std::vector<std::uint64_t>>, std::size_t> loaded_;
};

}  // namespace

LoweredGroup lower_group(const Graph& graph, const std::vector<std::size_t>& ops, const FusionFrame& frame) {
  return Lowering(graph, ops, frame).run();
}

Composed compose_members(const Graph& graph, const std::vector<std::size_t>& ops,
                         const std::vector<std::size_t>& inputs, const std::vector<std::size_t>& outputs) {
  Composed c;
  for (std::size_t o : ops) {
    // Errors of a chain add up to first order: the group allows the sum of its members' tolerances.
    const Tolerance t = graph.ops()[o].bound->tolerance();
    c.tolerance.abs += t.abs;
    c.tolerance.rel += t.rel;
    c.flops += graph.ops()[o].bound->cost().flops;
  }
  struct Member {
    std::shared_ptr<const BoundOp> op;
    std::vector<std::size_t> inputs;
    std::size_t output;
  };
  std::vector<Member> members;
  for (std::size_t o : ops) members.push_back({graph.ops()[o].bound, graph.ops()[o].inputs, graph.ops()[o].outputs[0]});
  c.reference = [members, inputs, outputs](std::span<const HostTensor> given) {
    std::map<std::size_t, HostTensor> env;
    for (std::size_t k = 0; k < inputs.size(); ++k) env[inputs[k]] = given[k];
    for (const Member& m : members) {
      std::vector<HostTensor> args;
      for (std::size_t t : m.inputs) args.push_back(env.at(t));
      env[m.output] = m.op->reference(args).at(0);
    }
    std::vector<HostTensor> result;
    for (std::size_t t : outputs) result.push_back(env.at(t));
    return result;
  };
  return c;
}

std::shared_ptr<const BoundOp> LoweredGroup::bind(const Graph& graph, FusedMapping mapping, const std::string& arch,
                                                  StagingPolicy policy) const {
  std::vector<Shape> in, out;
  for (std::size_t t : inputs) in.push_back(graph.tensor(t).shape);
  for (std::size_t t : outputs) out.push_back(graph.tensor(t).shape);
  Composed c = compose_members(graph, ops, inputs, outputs);
  return make_fused_op(program, std::move(mapping), std::move(in), std::move(out), std::move(c.reference), c.tolerance,
                       c.flops, arch, policy);
}

}  // namespace ldmsim::fusion
