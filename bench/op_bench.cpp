// Every built-in operator at a realistic size on a simulated machine (sw26010pro by default): simulated time and
// what bounds it (DMA or compute), and host time per simulated op vs the op's fp32 host reference (the
// simulator's overhead factor). Prints the two markdown tables of docs/benchmarks.md; medians of --reps runs.
#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ldmsim/kernels/operator.hpp"
#include "ldmsim/kernels/staging.hpp"
#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

struct Input {
  Shape shape;
  float lo = -2.0f, hi = 2.0f;  ///< uniform init range
};

struct Case {
  std::string op;
  std::vector<Input> inputs;
  json attrs = json::object();
};

struct Options {
  std::string arch = "sw26010pro";
  int reps = 5;
  unsigned threads = 1;
  std::string only;
};

/// What the simulator reported for one op (identical on every rep: the runs are deterministic).
struct SimResult {
  Cycle cycles = 0;
  double seconds = 0;
  std::uint64_t bytes = 0, requests = 0;
  std::uint64_t active_cores = 0;
  double compute_per_core = 0, issue_per_core = 0, wait_per_core = 0;  // means over active cores
  Cycle max_compute = 0;
  double dma_floor = 0;  // max over groups of group bytes / peak bytes per cycle
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double cpu_now() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// Host CPU seconds of f() summed over every thread of the process: the machine is shared, so wall time would
/// mostly measure other people's jobs.
template <typename F>
double seconds_of(F&& f) {
  const double t0 = cpu_now();
  f();
  return cpu_now() - t0;
}

SimResult delta(const Arch& arch, const RunStats& s0, const RunStats& s1) {
  SimResult r;
  r.cycles = s1.cycles - s0.cycles;
  r.seconds = s1.seconds - s0.seconds;
  const double issue = arch.dma.timing.value("issue_cycles", 0.0);
  const double peak = arch.dma.timing.value("bytes_per_cycle", 0.0);
  double compute = 0, issued = 0, wait = 0;
  for (std::size_t g = 0; g < s1.groups.size(); ++g) {
    std::uint64_t group_bytes = 0;
    for (std::size_t c = 0; c < s1.groups[g].cores.size(); ++c) {
      const CoreStats& a = s0.groups[g].cores[c];
      const CoreStats& b = s1.groups[g].cores[c];
      const std::uint64_t req = b.dma_requests - a.dma_requests;
      const Cycle busy = b.busy_cycles - a.busy_cycles;
      const auto issue_cycles = static_cast<Cycle>(issue * static_cast<double>(req));
      group_bytes += b.dma_bytes() - a.dma_bytes();
      r.requests += req;
      if (req == 0 && busy == 0) continue;
      ++r.active_cores;
      compute += static_cast<double>(busy - issue_cycles);
      issued += static_cast<double>(issue_cycles);
      wait += static_cast<double>(b.dma_wait_cycles - a.dma_wait_cycles);
      r.max_compute = std::max(r.max_compute, busy - issue_cycles);
    }
    r.bytes += group_bytes;
    if (peak > 0) r.dma_floor = std::max(r.dma_floor, static_cast<double>(group_bytes) / peak);
  }
  const double n = static_cast<double>(std::max<std::uint64_t>(r.active_cores, 1));
  r.compute_per_core = compute / n;
  r.issue_per_core = issued / n;
  r.wait_per_core = wait / n;
  return r;
}

struct Row {
  Case c;
  SimResult sim;
  double tensor_mib = 0, sim_host = 0, ref_host = 0, max_err = 0;
  bool within_tolerance = true;
  std::uint64_t flops = 0;  ///< the op's cost().flops
};

Row run_case(const OperatorRegistry& registry, const Case& c, const Options& o) {
  Row row{c, {}, 0, 0, 0, 0, true};
  std::vector<Shape> shapes;
  for (const auto& in : c.inputs) shapes.push_back(in.shape);
  const auto op = registry.bind(c.op, JsonField(c.attrs, "op_bench", c.op), shapes);
  const std::vector<Shape>& out_shapes = op->output_shapes();
  row.flops = op->cost().flops;
  // Inputs: fp16 values, and the same values in fp32 for the reference.
  std::mt19937_64 rng(42);
  std::vector<std::vector<f16>> halves;
  std::vector<HostTensor> host;
  for (const auto& in : c.inputs) {
    std::uniform_real_distribution<float> d(in.lo, in.hi);
    std::vector<float> v(in.shape.elements());
    for (auto& x : v) x = d(rng);
    std::vector<f16> h(v.size());
    floats_to_halves(v, h);
    halves_to_floats(h, v);
    halves.push_back(std::move(h));
    host.push_back(HostTensor{in.shape, std::move(v)});
    row.tensor_mib += static_cast<double>(in.shape.elements() * sizeof(f16)) / (1 << 20);
  }
  for (const auto& s : out_shapes) row.tensor_mib += static_cast<double>(s.elements() * sizeof(f16)) / (1 << 20);

  const Arch arch = Arch::resolve(o.arch);
  Machine m{arch, MachineOptions{.threads = o.threads, .trace = false}};
  std::vector<DeviceTensor> din, dout;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    din.push_back(stage_in(m, fmt::format("in{}", i), choose_plan(op->view(i), op->padding(i), StagingPolicy::kMethod),
                           halves[i]));
  }
  for (std::size_t i = 0; i < out_shapes.size(); ++i) {
    dout.push_back(allocate_tensor(
        m, fmt::format("out{}", i),
        choose_plan(op->view(c.inputs.size() + i), op->padding(c.inputs.size() + i), StagingPolicy::kMethod)));
  }
  std::vector<double> sim_t, ref_t;
  std::vector<HostTensor> ref;
  for (int rep = -1; rep < o.reps; ++rep) {  // rep -1 warms up: first touch of outputs and heap growth
    const RunStats s0 = m.stats();
    const double sim_s = seconds_of([&] { op->run(m, din, dout, c.op); });
    if (rep == 0) row.sim = delta(arch, s0, m.stats());
    ref.clear();  // reuse the heap memory of the previous result
    const double ref_s = seconds_of([&] { ref = op->reference(host); });
    if (rep < 0) continue;
    sim_t.push_back(sim_s);
    ref_t.push_back(ref_s);
  }
  row.sim_host = median(sim_t);
  row.ref_host = median(ref_t);
  // The simulated output must match the reference (a benchmark of wrong results would be meaningless).
  const std::vector<f16> got = stage_out(m, dout[0]);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double want = ref[0].data[i], err = std::abs(static_cast<double>(static_cast<float>(got[i])) - want);
    row.max_err = std::max(row.max_err, err);
    if (err > op->tolerance().abs + op->tolerance().rel * std::abs(want)) row.within_tolerance = false;
  }
  return row;
}

std::string shapes_of(const Case& c) {
  std::string s;
  for (const auto& in : c.inputs) s += (s.empty() ? "" : ", ") + in.shape.str();
  if (!c.attrs.empty()) s += " " + c.attrs.dump();
  return s;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view k = argv[i];
    if (k == "--arch") {
      o.arch = argv[i + 1];
    } else if (k == "--reps") {
      o.reps = std::max(1, std::atoi(argv[i + 1]));
    } else if (k == "--threads") {
      o.threads = static_cast<unsigned>(std::max(0, std::atoi(argv[i + 1])));
    } else if (k == "--only") {
      o.only = argv[i + 1];
    } else {
      fmt::print(stderr, "usage: op_bench [--arch NAME] [--reps N] [--threads T] [--only OP]\n");
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  // Keep freed memory in the heap: otherwise every reference call maps and faults in fresh pages for its
  // output, and the comparison measures the kernel's page-fault path instead of the computation.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  const OperatorRegistry registry = OperatorRegistry::builtin();
  const Shape act{32, 64, 56, 56}, big{32, 64, 112, 112};
  const Shape ch{64};
  const json pool_attrs = {{"kernel", 3}, {"stride", 2}, {"pad", 1}};
  const std::vector<Case> cases = {
      {"relu", {{act}}},
      {"sigmoid", {{act}}},
      {"tanh", {{act}}},
      {"add", {{act}, {act}}},
      {"mul", {{act}, {act}}},
      {"softmax", {{Shape{32, 1000}}}},
      {"fc", {{Shape{32, 2048}}, {Shape{1000, 2048}}, {Shape{1000}}}},
      {"gemm", {{Shape{32, 2048}}, {Shape{1000, 2048}}, {Shape{1000}}}, {{"transB", 1}}},
      {"matmul", {{Shape{512, 1024}}, {Shape{1024, 1024}}}},
      {"matmul", {{Shape{16, 128, 64}}, {Shape{16, 64, 128}}}},
      {"matmul", {{Shape{300, 701}}, {Shape{701, 251}}}},
      {"conv", {{Shape{32, 256, 14, 14}}, {Shape{256, 256, 3, 3}, -0.1f, 0.1f}}, {{"pad", 1}}},
      {"conv", {{Shape{32, 256, 14, 14}}, {Shape{256, 256, 3, 3}, -0.1f, 0.1f}}, {{"pad", 1}, {"algo", "direct"}}},
      {"max_pool", {{big}}, pool_attrs},
      {"avg_pool", {{big}}, pool_attrs},
      {"spatialbn", {{act}, {ch, 0.5f, 1.5f}, {ch}, {ch, -0.5f, 0.5f}, {ch, 0.5f, 2.0f}}},
      {"spatialbn_train", {{act}, {ch, 0.5f, 1.5f}, {ch}}},
  };
  std::vector<Row> rows;
  for (const Case& c : cases) {
    if (!o.only.empty() && c.op != o.only) continue;
    rows.push_back(run_case(registry, c, o));
    fmt::print(stderr, "{}: sim {:.1f} ms, ref {:.1f} ms\n", c.op, rows.back().sim_host * 1e3,
               rows.back().ref_host * 1e3);
  }
  const Arch arch = Arch::resolve(o.arch);
  const double peak =
      arch.dma.timing.value("bytes_per_cycle", 0.0) * static_cast<double>(arch.core_groups) * arch.clock_hz / 1e9;
  fmt::print("Simulated on {} ({} core groups x {} cores, peak DMA {:.0f} GB/s, {} flops/cycle/core)\n\n", arch.name,
             arch.core_groups, arch.cores_per_group(), peak, arch.flops_per_cycle);
  fmt::print(
      "| op | shapes | DMA MiB | requests | sim cycles | sim us | DMA GB/s | compute cyc/core | DMA wait cyc/core | "
      "DMA floor cyc | bound | % of f32 peak |\n");
  fmt::print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n");
  const double peak_flops = arch.compute.peak_flops_per_cycle(DataType::kF32) * arch.total_cores();
  for (const Row& r : rows) {
    const SimResult& s = r.sim;
    const double gbs = s.seconds > 0 ? static_cast<double>(s.bytes) / s.seconds / 1e9 : 0;
    // A core's time is compute + DMA issue + DMA wait: the larger of compute and wait bounds the op.
    const char* bound = s.wait_per_core > s.compute_per_core ? "DMA" : "compute";
    const double fraction = static_cast<double>(r.flops) / (static_cast<double>(s.cycles) * peak_flops);
    fmt::print("| {} | {} | {:.1f} | {} | {} | {:.1f} | {:.1f} | {:.0f} | {:.0f} | {:.0f} | {} | {:.1f}% |\n", r.c.op,
               shapes_of(r.c), static_cast<double>(s.bytes) / (1 << 20), s.requests, s.cycles, s.seconds * 1e6, gbs,
               s.compute_per_core, s.wait_per_core, s.dma_floor, bound, 100 * fraction);
  }
  fmt::print("\n| op | tensors MiB | sim host ms | fp32 ref ms | overhead | max abs err | within tol |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---|\n");
  bool ok = true;
  for (const Row& r : rows) {
    fmt::print("| {} | {:.1f} | {:.1f} | {:.1f} | {:.2f}x | {:.2g} | {} |\n", r.c.op, r.tensor_mib, r.sim_host * 1e3,
               r.ref_host * 1e3, r.sim_host / r.ref_host, r.max_err, r.within_tolerance ? "yes" : "NO");
    ok = ok && r.within_tolerance;
  }
  return ok ? 0 : 1;
}
