// Convolution layers of AlexNet, VGG-16, ResNet-50 and MobileNet plus grouped and odd-shaped ones, each run
// with every conv algorithm on a simulated machine (sw26010pro by default), side by side in one process:
// extra main-memory bytes, peak ldm, DMA bytes and requests, integer address operations per output,
// simulated cycles and the fraction of the compute model's f32 peak; and host time per simulated layer against
// a native fp32 im2col + OpenBLAS sgemm of the same layer (one thread each). Prints a markdown table
// (docs/benchmarks.md). Every algorithm's output must be bit-identical to the others' and match the native
// result within conv's tolerance, or the program fails. Host times are steady state: each side runs once untimed
// first (the simulated machine's local stores and the native workspace are touched by then), as in a network
// that runs many layers on one machine.
#include <cblas.h>
#include <fmt/format.h>

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

struct Layer {
  std::string name;
  std::size_t c, h, w, k, r, s, stride, pad, groups;
  std::size_t batch = 0;     ///< 0: --batch
  std::string arch;          ///< empty: --arch
  unsigned core_groups = 0;  ///< 0: the arch's
};

struct Options {
  std::string arch = "sw26010pro";
  std::size_t batch = 1;
  int reps = 3;
  std::string only;
  std::vector<std::string> algos = {"im2col", "direct", "implicit", "implicit-precomp"};
};

double cpu_now() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// The layers: name, C, H, W, K, R, S, stride, pad, groups.
std::vector<Layer> layers() {
  return {
      {"alexnet.conv1 11x11/4", 3, 227, 227, 96, 11, 11, 4, 0, 1},
      {"alexnet.conv2 5x5 g2", 96, 27, 27, 256, 5, 5, 1, 2, 2},
      {"alexnet.conv3 3x3", 256, 13, 13, 384, 3, 3, 1, 1, 1},
      {"alexnet.conv5 3x3 g2", 384, 13, 13, 256, 3, 3, 1, 1, 2},
      {"vgg16.conv1_2 3x3", 64, 112, 112, 64, 3, 3, 1, 1, 1},
      {"vgg16.conv3_2 3x3", 256, 56, 56, 256, 3, 3, 1, 1, 1},
      {"vgg16.conv5_2 3x3", 512, 14, 14, 512, 3, 3, 1, 1, 1},
      {"resnet50.conv1 7x7/2", 3, 224, 224, 64, 7, 7, 2, 3, 1},
      {"resnet50.res2a 1x1", 64, 56, 56, 64, 1, 1, 1, 0, 1},
      {"resnet50.res2a 3x3", 64, 56, 56, 64, 3, 3, 1, 1, 1},
      {"resnet50.res3a 1x1/2", 256, 56, 56, 512, 1, 1, 2, 0, 1},
      {"resnet50.res4a 3x3", 256, 14, 14, 256, 3, 3, 1, 1, 1},
      {"mobilenet dw 3x3", 32, 112, 112, 32, 3, 3, 1, 1, 32},
      {"mobilenet dw 3x3/2", 64, 112, 112, 64, 3, 3, 2, 1, 64},
      {"mobilenet pw 1x1", 64, 56, 56, 128, 1, 1, 1, 0, 1},
      {"resnext 3x3 g32", 128, 56, 56, 128, 3, 3, 1, 1, 32},
      {"odd C=7 27x27 5x5", 7, 27, 27, 9, 5, 5, 1, 2, 1},
      {"odd 13x13 W odd", 5, 13, 13, 11, 3, 3, 1, 1, 1},
      {"swDNN 128x128 3x3 (sw26010, 1 group)", 128, 12, 12, 128, 3, 3, 1, 0, 1, 128, "sw26010", 1},
  };
}

/// fp32 im2col (into `col`) + sgemm per (sample, group), the native reference: Y [n, k, p, q] in `y`.
void native_conv(const Layer& l, std::size_t n, const std::vector<float>& x, const std::vector<float>& w, std::size_t p,
                 std::size_t q, std::vector<float>& col, std::vector<float>& y) {
  const std::size_t cg = l.c / l.groups, kg = l.k / l.groups, depth = cg * l.r * l.s, pq = p * q;
  col.resize(depth * pq);
  y.resize(n * l.k * pq);
  for (std::size_t b = 0; b < n; ++b) {
    for (std::size_t g = 0; g < l.groups; ++g) {
      for (std::size_t j = 0; j < depth; ++j) {
        const std::size_t c = j / (l.r * l.s), r = (j / l.s) % l.r, s = j % l.s;
        for (std::size_t i = 0; i < p; ++i) {
          const auto h = static_cast<std::ptrdiff_t>(i * l.stride + r) - static_cast<std::ptrdiff_t>(l.pad);
          for (std::size_t t = 0; t < q; ++t) {
            const auto v = static_cast<std::ptrdiff_t>(t * l.stride + s) - static_cast<std::ptrdiff_t>(l.pad);
            const bool inside =
                h >= 0 && h < static_cast<std::ptrdiff_t>(l.h) && v >= 0 && v < static_cast<std::ptrdiff_t>(l.w);
            col[j * pq + i * q + t] = inside ? x[((b * l.c + g * cg + c) * l.h + static_cast<std::size_t>(h)) * l.w +
                                                 static_cast<std::size_t>(v)]
                                             : 0.0f;
          }
        }
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(kg), static_cast<int>(pq),
                  static_cast<int>(depth), 1.0f, w.data() + g * kg * depth, static_cast<int>(depth), col.data(),
                  static_cast<int>(pq), 0.0f, y.data() + (b * l.k + g * kg) * pq, static_cast<int>(pq));
    }
  }
}

struct Result {
  std::string algo;
  json metrics;
  RunStats stats;
  double host = 0;
  std::vector<f16> y;
};

Result run_algo(const Layer& l, const Arch& arch, std::size_t n, const std::string& algo,
                const std::vector<std::vector<f16>>& inputs, int reps) {
  const OperatorRegistry registry = OperatorRegistry::builtin();
  const json attrs = {{"stride", l.stride}, {"pad", l.pad}, {"groups", l.groups}, {"algo", algo}};
  const std::vector<Shape> shapes = {Shape{n, l.c, l.h, l.w}, Shape{l.k, l.c / l.groups, l.r, l.s}};
  const auto op = registry.bind("conv", JsonField(attrs, "conv_bench", l.name), shapes);
  Result r{algo, {}, {}, 0, {}};
  Machine m{arch, MachineOptions{.threads = 1, .trace = false}};
  std::vector<DeviceTensor> in, out;
  for (std::size_t i = 0; i < 2; ++i) {
    in.push_back(stage_in(m, fmt::format("in{}", i), choose_plan(op->view(i), op->padding(i), StagingPolicy::kMethod),
                          inputs[i]));
  }
  out.push_back(allocate_tensor(m, "y", choose_plan(op->view(2), op->padding(2), StagingPolicy::kMethod)));
  // The first run gives the statistics and the output; the timed runs repeat it on the warm machine.
  op->run(m, in, out, "conv");
  r.stats = m.stats();
  r.metrics = op->run_metrics();
  r.y = stage_out(m, out[0]);
  std::vector<double> times;
  for (int rep = 0; rep < reps; ++rep) {
    const double t0 = cpu_now();
    op->run(m, in, out, "conv");
    times.push_back(cpu_now() - t0);
  }
  r.host = median(times);
  return r;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view k = argv[i];
    if (k == "--arch") {
      o.arch = argv[i + 1];
    } else if (k == "--batch") {
      o.batch = static_cast<std::size_t>(std::max(1, std::atoi(argv[i + 1])));
    } else if (k == "--reps") {
      o.reps = std::max(1, std::atoi(argv[i + 1]));
    } else if (k == "--only") {
      o.only = argv[i + 1];
    } else if (k == "--algos") {
      o.algos.clear();
      std::string list = argv[i + 1];
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        o.algos.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    } else {
      fmt::print(stderr,
                 "usage: conv_bench [--arch NAME] [--batch N] [--reps N] [--only SUBSTRING] [--algos a,b,...]\n");
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  openblas_set_num_threads(1);
  fmt::print(
      "| layer | N | algo | extra main memory | peak ldm KiB | DMA MiB | requests | address ops / output | "
      "sim cycles | busiest core busy | mean DMA wait | % of f32 peak | host s | native s | host / native |\n");
  fmt::print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  bool ok = true;
  for (const Layer& l : layers()) {
    if (!o.only.empty() && l.name.find(o.only) == std::string::npos) continue;
    Arch arch = Arch::resolve(l.arch.empty() ? o.arch : l.arch);
    if (l.core_groups != 0) arch.core_groups = l.core_groups;
    const std::size_t n = l.batch != 0 ? l.batch : o.batch;
    const std::size_t p = (l.h + 2 * l.pad - l.r) / l.stride + 1, q = (l.w + 2 * l.pad - l.s) / l.stride + 1;
    // Inputs in fp16, and the same values in fp32 for the native reference.
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<std::vector<f16>> halves;
    std::vector<std::vector<float>> floats;
    for (const std::size_t size : {n * l.c * l.h * l.w, l.k * (l.c / l.groups) * l.r * l.s}) {
      std::vector<float> v(size);
      for (float& x : v) x = dist(rng);
      std::vector<f16> h(size);
      floats_to_halves(v, h);
      halves_to_floats(h, v);
      halves.push_back(std::move(h));
      floats.push_back(std::move(v));
    }
    std::vector<double> native_times;
    std::vector<float> col, expected;
    native_conv(l, n, floats[0], floats[1], p, q, col, expected);  // untimed: the workspace is touched
    for (int rep = 0; rep < o.reps; ++rep) {
      const double t0 = cpu_now();
      native_conv(l, n, floats[0], floats[1], p, q, col, expected);
      native_times.push_back(cpu_now() - t0);
    }
    const double native = median(native_times);
    const double flops = 2.0 * static_cast<double>(n * l.k * p * q * (l.c / l.groups) * l.r * l.s);
    std::vector<f16> first;
    for (const std::string& algo : o.algos) {
      const Result r = run_algo(l, arch, n, algo, halves, o.reps);
      if (first.empty()) first = r.y;
      if (r.y != first) {
        fmt::print(stderr, "{}: {} differs from {}\n", l.name, algo, o.algos.front());
        ok = false;
      }
      for (std::size_t i = 0; i < r.y.size(); ++i) {
        const double got = static_cast<float>(r.y[i]), want = expected[i];
        if (std::abs(got - want) > 2e-3 + std::abs(want) / 512) {
          fmt::print(stderr, "{} {}: element {} is {} instead of {}\n", l.name, algo, i, got, want);
          ok = false;
          break;
        }
      }
      const double peak = arch.compute.peak_flops_per_cycle(DataType::kF32) * arch.total_cores();
      // What bounds the layer: the busiest core's charged work against the mean DMA wait of active cores.
      Cycle busiest = 0;
      double wait = 0, active = 0;
      for (const GroupStats& group : r.stats.groups) {
        for (const CoreStats& core : group.cores) {
          busiest = std::max(busiest, core.busy_cycles);
          if (core.dma_requests == 0) continue;
          wait += static_cast<double>(core.dma_wait_cycles);
          active += 1;
        }
      }
      fmt::print(
          "| {} | {} | {} | {} | {:.1f} | {:.1f} | {} | {:.2f} | {} | {} | {:.0f} | {:.1f}% | {:.3f} | {:.3f} | "
          "{:.1f}x |\n",
          l.name, n, algo, r.metrics.value("extra_main_memory_bytes", std::uint64_t{0}),
          static_cast<double>(r.stats.ldm_high_water()) / 1024, static_cast<double>(r.stats.dma_bytes()) / (1 << 20),
          r.stats.dma_requests(), r.metrics.value("address_ops_per_output", 0.0), r.stats.cycles, busiest,
          active > 0 ? wait / active : 0.0, 100 * flops / (static_cast<double>(r.stats.cycles) * peak), r.host, native,
          r.host / native);
      std::fflush(stdout);
    }
  }
  return ok ? 0 : 1;
}
