// Test harness: binds one operator of the built-in registry, stages random inputs under a staging policy, runs
// its device kernel on a small machine and compares the stripped outputs with the fp32 reference.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ldmsim/kernels/operator.hpp"
#include "ldmsim/kernels/staging.hpp"
#include "ldmsim/ldmsim.hpp"

namespace ldmsim::test {

struct OpRun {
  bool trapped = false;
  std::string fault;
  double max_excess = 0;  ///< max of |dev - ref| - tol over all outputs (<= 0 means within tolerance)
  bool any_padding = false;
  std::size_t cores_with_dma = 0;  ///< cores (over all groups) that issued at least one DMA
  std::uint64_t dma_requests = 0;  ///< DMA requests of every core
  std::uint64_t dma_bytes = 0;     ///< bytes those requests moved
  nlohmann::json metrics;          ///< the op's run_metrics()
  Cycle cycles = 0;                ///< simulated cycles of the run
};

/// One operator application of a table-driven test: op name, input shapes, attributes.
struct OpCase {
  std::string op;
  std::vector<Shape> shapes;
  nlohmann::json attrs;
};

inline const OperatorRegistry& registry() {
  static const OperatorRegistry r = OperatorRegistry::builtin();
  return r;
}

/// The logical shape of a 4-D test shape (its first `rank` dims).
inline Shape shape_of(const Shape4& s) {
  std::vector<std::uint64_t> dims;
  for (std::size_t d : s.dims()) dims.push_back(d);
  return Shape(dims);
}

/// Binds `name` with `attrs` on `shapes` (ConfigError on a bad attribute or shape).
inline std::unique_ptr<BoundOp> bind_op(const std::string& name, const std::vector<Shape>& shapes,
                                        const nlohmann::json& attrs = nullptr) {
  return registry().bind(name, JsonField(attrs, "test", "attrs"), shapes);
}

inline Arch small_arch(unsigned groups = 2) {
  Arch a = Arch::preset("tiny");
  a.core_groups = groups;
  a.ldm_bytes = 64 * 1024;
  return a;
}

/// Runs `name` on machine `m` on inputs of `shapes` (values uniform in [lo, hi], or `fixed` where given) under
/// `policy`.
inline OpRun run_op_on(Machine& m, const std::string& name, const std::vector<Shape>& shapes,
                       const nlohmann::json& attrs, StagingPolicy policy, float lo = -2.0f, float hi = 2.0f,
                       unsigned seed = 7, const std::vector<std::vector<float>>& fixed = {}) {
  const auto op = bind_op(name, shapes, attrs);
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
    const PaddingPlan plan = choose_plan(op->view(i), op->padding(i), policy);
    r.any_padding = r.any_padding || plan.kind == PlanKind::kUnpadded || plan.added_elements() > 0;
    in.push_back(stage_in(m, "in" + std::to_string(i), plan, h));
    host.push_back(std::move(t));
  }
  std::vector<DeviceTensor> out;
  for (std::size_t j = 0; j < op->output_shapes().size(); ++j) {
    const std::size_t index = shapes.size() + j;
    const PaddingPlan plan = choose_plan(op->view(index), op->padding(index), policy);
    r.any_padding = r.any_padding || plan.kind == PlanKind::kUnpadded || plan.added_elements() > 0;
    out.push_back(allocate_tensor(m, "out" + std::to_string(j), plan));
  }
  try {
    op->run(m, in, out, name);
  } catch (const Fault& f) {
    r.trapped = true;
    r.fault = f.what();
    return r;
  }
  r.metrics = op->run_metrics();
  const RunStats stats = m.stats();
  r.cycles = stats.cycles;
  for (const auto& g : stats.groups) {
    for (const auto& c : g.cores) {
      r.cores_with_dma += c.dma_requests > 0 ? 1 : 0;
      r.dma_requests += c.dma_requests;
      r.dma_bytes += c.dma_bytes();
    }
  }
  const auto ref = op->reference(host);
  const Tolerance tol = op->tolerance();
  r.max_excess = -1e30;
  for (std::size_t j = 0; j < out.size(); ++j) {
    const std::vector<f16> dev = stage_out(m, out[j]);
    for (std::size_t i = 0; i < dev.size(); ++i) {
      const double d = static_cast<double>(static_cast<float>(dev[i]));
      const double e = static_cast<double>(ref[j].data[i]);
      if (!std::isfinite(e)) {  // an infinity must be matched exactly, a NaN by a NaN
        if (!(std::isnan(e) ? std::isnan(d) : d == e)) r.max_excess = 1e30;
        continue;
      }
      r.max_excess = std::max(r.max_excess, std::abs(d - e) - (tol.abs + tol.rel * std::abs(e)));
      if (std::isnan(d)) r.max_excess = 1e30;
    }
  }
  return r;
}

/// run_op_on on a machine of its own.
inline OpRun run_op(const std::string& name, const std::vector<Shape>& shapes, const nlohmann::json& attrs,
                    StagingPolicy policy, float lo = -2.0f, float hi = 2.0f, unsigned seed = 7,
                    const std::vector<std::vector<float>>& fixed = {}, const Arch& arch = small_arch()) {
  Machine m{arch};
  return run_op_on(m, name, shapes, attrs, policy, lo, hi, seed, fixed);
}

/// The same with 4-D test shapes.
inline OpRun run_op(const std::string& name, const std::vector<Shape4>& shapes, const nlohmann::json& attrs,
                    StagingPolicy policy, float lo = -2.0f, float hi = 2.0f, unsigned seed = 7,
                    const std::vector<std::vector<float>>& fixed = {}) {
  std::vector<Shape> logical;
  for (const auto& s : shapes) logical.push_back(shape_of(s));
  return run_op(name, logical, attrs, policy, lo, hi, seed, fixed);
}

/// The shapes every operator is tested on: even, 1x1x1x1, primes, and only c*h*w / h*w / w odd.
inline std::vector<Shape4> test_shapes() {
  return {Shape4{2, 4, 6, 8}, Shape4{1, 1, 1, 1}, Shape4{3, 5, 7, 9}, Shape4{2, 3, 5, 7}, Shape4{3, 3, 5, 7},
          Shape4{2, 2, 3, 5}, Shape4{3, 2, 3, 5}, Shape4{1, 3, 4, 5}, Shape4{3, 4, 4, 3}, Shape4{2, 3, 2, 5}};
}

}  // namespace ldmsim::test
