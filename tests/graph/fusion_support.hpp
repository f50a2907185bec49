// Fusion tests' helpers: the workloads of the cases, a generator of random memory-intensive graphs, and a
// fused-versus-unfused runner whose agreement check follows docs/fusion.md § Accuracy.
#pragma once

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>

#include "../../bench/fusion_cases.hpp"
#include "kernels/op_harness.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/executor.hpp"
#include "ldmsim/graph/fusion.hpp"

namespace ldmsim::test {

inline Graph graph_of(const nlohmann::json& w) {
  return workload_from_json(w, "fusion.json", ".", registry());
}

/// A random graph of `ops` ops on one seeded shape (odd sizes and 1s included): unary activations, broadcasting
/// add / sub / mul against scalars, vectors, columns, any broadcastable shape and reductions, reductions over the last
/// or a middle axis, softmax, layer_norm, and now and then a matmul that cuts the graph. Magnitudes stay bounded (fp16
/// never overflows); every tensor nobody reads is an output. Leading axes become 1 until the shape has at most
/// `max_elements`.
inline nlohmann::json random_memory_graph(unsigned seed, int ops, std::uint64_t max_elements = 1u << 20) {
  using nlohmann::json;
  std::mt19937 rng(seed);
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const std::uint64_t sizes[] = {1, 2, 3, 5, 7, 8, 13, 16, 31};
  const int rank = 2 + pick(3);
  std::vector<std::uint64_t> s;
  for (int a = 0; a < rank; ++a) s.push_back(sizes[pick(9)]);
  s.back() = std::max<std::uint64_t>(s.back(), 2);
  const auto elements = [&] {
    std::uint64_t n = 1;
    for (auto d : s) n *= d;
    return n;
  };
  for (std::size_t a = 0; a + 1 < s.size() && elements() > max_elements; ++a) s[a] = 1;
  struct T {
    std::string name;
    std::vector<std::uint64_t> shape;
    double bound;
  };
  std::vector<T> pool;
  json w;
  w["name"] = fmt::format("random{}", seed);
  w["tensors"] = json::object();
  w["ops"] = json::array();
  int inputs = 0;
  const auto input = [&](std::vector<std::uint64_t> shape) {
    const std::string name = fmt::format("in{}", inputs++);
    w["tensors"][name] = {{"shape", shape},
                          {"init", {{"uniform", {-2, 2}}, {"seed", seed * 100 + static_cast<unsigned>(inputs)}}}};
    return T{name, shape, 2.0};
  };
  pool.push_back(input(s));
  std::set<std::string> read;
  int made = 0;
  const auto add = [&](const std::string& type, std::vector<T> in, std::vector<std::uint64_t> shape, double bound,
                       json attrs = nullptr) {
    const std::string name = fmt::format("t{}", made++);
    json op = {{"type", type}, {"outputs", {name}}};
    for (const T& t : in) {
      op["inputs"].push_back(t.name);
      read.insert(t.name);
    }
    if (!attrs.is_null()) op["attrs"] = attrs;
    w["ops"].push_back(op);
    pool.push_back({name, shape, bound});
  };
  const auto full = [&]() {  // a pool tensor of the full shape, recent ones preferred
    std::vector<std::size_t> c;
    for (std::size_t i = 0; i < pool.size(); ++i) {
      if (pool[i].shape == s) c.push_back(i);
    }
    return pool[c[c.size() - 1 - static_cast<std::size_t>(pick(static_cast<int>(std::min<std::size_t>(c.size(), 4))))]];
  };
  const char* unary[] = {"relu", "sigmoid", "tanh", "erf", "gelu"};
  while (made < ops) {
    const T x = full();
    std::vector<std::uint64_t> last1 = s;
    last1.back() = 1;
    switch (pick(10)) {
      case 0:
      case 1: {
        const std::string u = unary[pick(5)];
        add(u, {x}, s, u == "relu" || u == "gelu" ? x.bound : 1.0);
        break;
      }
      case 2:
      case 3:
      case 4: {  // broadcasting binary op
        T y = x;
        switch (pick(6)) {
          case 0:
            y = input({});
            break;
          case 5: {  // any broadcast: each axis whole or 1, leading axes maybe dropped
            std::vector<std::uint64_t> any;
            for (std::size_t a = static_cast<std::size_t>(pick(rank)); a < s.size(); ++a) {
              any.push_back(pick(2) == 0 ? s[a] : 1);
            }
            // At most 1024 elements: the unfused element-wise kernel holds a broadcast operand in ldm.
            std::uint64_t n = 1;
            for (auto d : any) n *= d;
            for (auto& d : any) {
              if (n > 1024 && d > 1) n /= d, d = 1;
            }
            y = input(any);
            break;
          }
          case 1:
            y = input({s.back()});
            break;
          case 2:
            y = input(last1);
            break;
          case 3: {
            std::vector<std::uint64_t> col(s.end() - 2, s.end());
            col.back() = 1;
            y = input(col);
            break;
          }
          default: {
            bool found = false;
            for (auto it = pool.rbegin(); it != pool.rend(); ++it) {
              if (it->shape == last1 || it->shape == s) {
                y = *it;
                found = true;
                break;
              }
            }
            if (!found) y = input(s);
          }
        }
        const int k = pick(3);
        const double bound = k == 2 ? x.bound * y.bound : x.bound + y.bound;
        if (bound > 60) {
          add("tanh", {x}, s, 1.0);
          break;
        }
        add(k == 0 ? "add" : k == 1 ? "sub" : "mul", {x, y}, s, bound);
        break;
      }
      case 5:
      case 6: {  // a reduction over the last axis (keepdims) then a broadcast use of it
        const char* kinds[] = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min"};
        const std::string kind = kinds[pick(4)];
        const double bound = kind == "reduce_sum" ? x.bound * static_cast<double>(s.back()) : x.bound;
        if (bound > 60) {
          add("sigmoid", {x}, s, 1.0);
          break;
        }
        add(kind, {x}, last1, bound, {{"axes", {-1}}});
        add(pick(2) == 0 ? "sub" : "add", {x, pool.back()}, s, x.bound + bound);
        break;
      }
      case 7:
        add("softmax", {x}, s, 1.0, {{"axis", rank - 1}});
        break;
      case 8: {
        const T g = input({s.back()}), b = input({s.back()});
        add("layer_norm", {x, g, b}, s, 2.0 * std::sqrt(static_cast<double>(s.back())) + 2.0, {{"axis", -1}});
        break;
      }
      default:
        if (pick(2) == 0) {  // a compute-intensive op cuts the graph
          const T m = input({s.back(), s.back()});
          if (x.bound * 2.0 * static_cast<double>(s.back()) > 60) {
            add("tanh", {x}, s, 1.0);
            break;
          }
          add("matmul", {x, m}, s, x.bound * 2.0 * static_cast<double>(s.back()));
        } else {  // a reduction over a middle axis: another frame
          std::vector<std::uint64_t> mid = s;
          mid[0] = 1;
          add("reduce_max", {x}, mid, x.bound, {{"axes", {0}}});
          add("mul", {x, pool.back()}, s, x.bound * x.bound > 60 ? 60 : x.bound * x.bound);
        }
    }
  }
  w["outputs"] = json::array();
  for (const T& t : pool) {
    if (t.name.rfind("t", 0) == 0 && read.count(t.name) == 0) w["outputs"].push_back(t.name);
  }
  return w;
}

/// What an output may differ by between the runs: twice a first-order bound on either run's distance from the
/// exact (fp32 reference) result. Each op adds its own tolerance and passes on its inputs' errors times its
/// gain, measured on the reference values (a layer_norm of an almost constant row amplifies by 1 / its std, a
/// sum by its length, a product by the other factor): a graph the generator makes ill-conditioned gets the
/// allowance its conditioning deserves, a well-conditioned one a tight one.
struct Allowance {
  double error = 0;
  double allowed() const { return 2 * error; }
};

struct FusionRun {
  ExecutionResult fused, unfused;
  std::map<std::string, Allowance> allowance;
  std::uint64_t fused_cycles() const { return fused.stats["cycles"].get<std::uint64_t>(); }
  std::uint64_t unfused_cycles() const { return unfused.stats["cycles"].get<std::uint64_t>(); }
  std::uint64_t fused_dma_bytes() const { return fused.stats["dma_bytes"].get<std::uint64_t>(); }
  std::uint64_t unfused_dma_bytes() const { return unfused.stats["dma_bytes"].get<std::uint64_t>(); }
};

inline double max_abs(const HostTensor& t) {
  double m = 0;
  for (float v : t.data) m = std::max<double>(m, std::abs(v));
  return m;
}

inline double min_abs(const HostTensor& t) {
  double m = std::numeric_limits<double>::infinity();
  for (float v : t.data) m = std::min<double>(m, std::abs(v));
  return m;
}

/// 1 / the smallest std (with epsilon) of the rows of the trailing `cols` elements.
inline double inverse_std(const HostTensor& x, std::uint64_t cols, double epsilon) {
  double worst = 0;
  for (std::size_t r = 0; r < x.data.size() / cols; ++r) {
    double sum = 0, sq = 0;
    for (std::size_t c = 0; c < cols; ++c) sum += x.data[r * cols + c];
    const double mean = sum / static_cast<double>(cols);
    for (std::size_t c = 0; c < cols; ++c) sq += (x.data[r * cols + c] - mean) * (x.data[r * cols + c] - mean);
    worst = std::max(worst, 1 / std::sqrt(sq / static_cast<double>(cols) + epsilon));
  }
  return worst;
}

/// How much an error in input k of `op` can grow into its output (first order, on the reference values).
inline double gain(const OpNode& op, const std::vector<HostTensor>& in, const HostTensor& out, std::size_t k) {
  const std::string& t = op.type;
  const auto other = [&] { return max_abs(in[1 - k]); };
  if (t == "relu" || t == "tanh" || t == "add" || t == "sub" || t == "reduce_mean" || t == "reduce_max" ||
      t == "reduce_min" || t == "clip") {
    return 1;
  }
  if (t == "sigmoid") return 0.25;
  if (t == "erf" || t == "gelu") return 1.13;
  if (t == "exp") return max_abs(out);
  if (t == "mul") return other();
  if (t == "div") return k == 0 ? 1 / min_abs(in[1]) : max_abs(in[0]) / (min_abs(in[1]) * min_abs(in[1]));
  if (t == "pow") return k == 0 ? 2 * max_abs(in[0]) * std::max(1.0, max_abs(in[1])) : max_abs(out) * 8;
  if (t == "sqrt") return 0.5 / std::sqrt(std::max(min_abs(in[0]), 1e-12));
  if (t == "reduce_sum")
    return static_cast<double>(in[0].shape.elements() / std::max<std::uint64_t>(1, out.shape.elements()));
  if (t == "softmax") return 2;
  if (t == "layer_norm") {
    const std::uint64_t cols = in[1].shape.elements();
    return k == 0 ? 2 * max_abs(in[1]) * inverse_std(in[0], cols, 1e-5) : max_abs(out) + 1;
  }
  if (t == "spatialbn") return k == 0 ? max_abs(in[1]) / std::sqrt(min_abs(in[4]) + 1e-5) : max_abs(out) + 1;
  if (t == "matmul") {
    const std::uint64_t inner = in[0].shape[in[0].shape.rank() - 1];
    return static_cast<double>(inner) * other();
  }
  FAIL("no error gain for op type " << t);
  return 0;
}

/// Per graph output: the bound on each run's error (see Allowance).
inline std::map<std::string, Allowance> allowances(const Graph& g) {
  std::vector<HostTensor> host(g.tensors().size());
  std::vector<double> error(g.tensors().size(), 0.0);
  for (std::size_t t = 0; t < g.tensors().size(); ++t) {
    const TensorNode& n = g.tensor(t);
    if (!n.is_input()) continue;
    const std::vector<f16> h = initial_values(n).to_vector();
    host[t] = HostTensor{n.shape, std::vector<float>(h.size())};
    halves_to_floats(h, host[t].data);
  }
  for (const OpNode& op : g.ops()) {
    std::vector<HostTensor> in;
    for (std::size_t t : op.inputs) in.push_back(host[t]);
    auto out = op.bound->reference(in);
    const Tolerance tol = op.bound->tolerance();
    double e = tol.abs + tol.rel * max_abs(out[0]);
    for (std::size_t k = 0; k < op.inputs.size(); ++k) e += gain(op, in, out[0], k) * error[op.inputs[k]];
    error[op.outputs[0]] = e;
    host[op.outputs[0]] = std::move(out[0]);
  }
  std::map<std::string, Allowance> result;
  for (std::size_t t : g.outputs()) result[g.tensor(t).name] = Allowance{error[t]};
  return result;
}

/// `g` run on one host thread and on four (determinism checks).
inline std::pair<ExecutionResult, ExecutionResult> run_one_and_four_threads(const Graph& g, const Arch& arch) {
  MachineOptions one, four;
  one.threads = 1;
  four.threads = 4;
  Machine m1(arch, one), m4(arch, four);
  return {execute(g, m1), execute(g, m4)};
}

inline FusionRun run_both(const Graph& g, const Arch& arch, StagingPolicy policy = StagingPolicy::kMethod) {
  FusionRun run;
  ExecuteOptions options;
  options.staging = policy;
  Machine unfused(arch);
  run.unfused = execute(g, unfused, options);
  const FusedGraph f = fuse(g, arch, policy);
  Machine fused(arch);
  run.fused = execute(f.graph, fused, options);
  run.allowance = allowances(g);
  return run;
}

/// Fused and unfused outputs agree within their allowance (docs/fusion.md § Accuracy).
inline void check_agree(const FusionRun& run) {
  for (const auto& [name, unfused] : run.unfused.outputs) {
    CAPTURE(name);
    const auto& fused = run.fused.outputs.at(name);
    REQUIRE(fused.size() == unfused.size());
    double worst = 0;
    for (std::size_t i = 0; i < fused.size(); ++i) {
      const double a = static_cast<float>(fused[i]), b = static_cast<float>(unfused[i]);
      if (std::isnan(a) || std::isnan(b)) {
        CHECK(std::isnan(a) == std::isnan(b));
        continue;
      }
      worst = std::max(worst, std::abs(a - b));
    }
    const double allowed = run.allowance.at(name).allowed();
    CAPTURE(worst, allowed);
    CHECK(worst <= allowed);
  }
}

/// The DMA events of running the (fused) graph `g` on `arch`, per core group in record order.
inline std::vector<std::vector<DmaEvent>> dma_events(const Graph& g, const Arch& arch) {
  Machine m(arch);
  execute(g, m);
  std::vector<std::vector<DmaEvent>> events;
  for (const TraceRecorder* recorder : m.trace()) {
    events.emplace_back();
    recorder->for_each_dma([&](const DmaEvent& e) { events.back().push_back(e); });
  }
  return events;
}

}  // namespace ldmsim::test
