// Test harness: runs one registered operator on a small machine under a staging policy and compares the
// stripped outputs with the fp32 reference.
#pragma once

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ldmsim/kernels/operators.hpp"
#include "ldmsim/ldmsim.hpp"
#include "ldmsim/runtime/operator.hpp"
#include "ldmsim/runtime/staging.hpp"

namespace ldmsim::test {

struct OpRun {
  bool trapped = false;
  std::string fault;
  double max_excess = 0;  ///< max of |dev - ref| - tol over all outputs (<= 0 means within tolerance)
  bool any_padding = false;
};

inline const Operator& op_named(const std::string& name) {
  kernels::register_builtin_operators(operator_registry());
  const Operator* op = operator_registry().find(name);
  if (op == nullptr) throw std::runtime_error("no operator " + name);
  return *op;
}

inline Arch small_arch(unsigned groups = 2) {
  Arch a = Arch::preset("tiny");
  a.core_groups = groups;
  a.ldm_bytes = 64 * 1024;
  return a;
}

/// Runs `name` on inputs of `shapes` (values uniform in [lo, hi]) under `policy`.
inline OpRun run_op(const std::string& name, const std::vector<Shape4>& shapes, const nlohmann::json& attrs,
                    StagingPolicy policy, float lo = -2.0f, float hi = 2.0f, unsigned seed = 7,
                    const std::vector<std::vector<float>>& fixed = {}) {
  const Operator& op = op_named(name);
  Machine m{small_arch()};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<HostTensor> host;
  std::vector<DeviceTensor> in;
  OpRun r;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    HostTensor t{shapes[i], std::vector<float>(shapes[i].elements())};
    if (i < fixed.size() && !fixed[i].empty()) {
      t.data = fixed[i];
    } else {
      for (auto& v : t.data) v = dist(rng);
    }
    std::vector<f16> h(t.data.size());
    floats_to_halves(t.data, h);
    halves_to_floats(h, t.data);  // the reference sees exactly the staged fp16 values
    const PaddingPlan plan = choose_plan(shapes[i], op.padding(i), policy);
    r.any_padding = r.any_padding || plan.kind == PlanKind::kUnpadded || plan.added_elements() > 0;
    in.push_back(stage_in(m, "in" + std::to_string(i), plan, h));
    host.push_back(std::move(t));
  }
  const auto out_shapes = op.infer(shapes, attrs);
  std::vector<DeviceTensor> out;
  for (std::size_t j = 0; j < out_shapes.size(); ++j) {
    const PaddingPlan plan = choose_plan(out_shapes[j], op.padding(shapes.size() + j), policy);
    r.any_padding = r.any_padding || plan.kind == PlanKind::kUnpadded || plan.added_elements() > 0;
    out.push_back(allocate_tensor(m, "out" + std::to_string(j), plan));
  }
  try {
    op.run(m, in, out, attrs, name);
  } catch (const Fault& f) {
    r.trapped = true;
    r.fault = f.what();
    return r;
  }
  const auto ref = op.reference(host, attrs);
  r.max_excess = -1e30;
  for (std::size_t j = 0; j < out.size(); ++j) {
    const std::vector<f16> dev = stage_out(m, out[j]);
    for (std::size_t i = 0; i < dev.size(); ++i) {
      const double d = static_cast<double>(static_cast<float>(dev[i]));
      const double e = static_cast<double>(ref[j].data[i]);
      const double tol = op.abs_tolerance + op.rel_tolerance * std::abs(e);
      r.max_excess = std::max(r.max_excess, std::abs(d - e) - tol);
      if (std::isnan(d)) r.max_excess = 1e30;
    }
  }
  return r;
}

/// The shapes every operator is tested on: even, 1x1x1x1, primes, and only c*h*w / h*w / w odd.
inline std::vector<Shape4> test_shapes() {
  return {Shape4{2, 4, 6, 8}, Shape4{1, 1, 1, 1}, Shape4{3, 5, 7, 9}, Shape4{2, 3, 5, 7}, Shape4{3, 3, 5, 7},
          Shape4{2, 2, 3, 5}, Shape4{3, 2, 3, 5}, Shape4{1, 3, 4, 5}, Shape4{3, 4, 4, 3}, Shape4{2, 3, 2, 5}};
}

}  // namespace ldmsim::test
