// The built-in demo (see demo.hpp). Every core group works on its own data, held in its own main-memory
// window; each kernel's output is compared bit for bit with the same fp32 arithmetic done on the host.
#include "demo.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include "ldmsim/ldmsim.hpp"
#include "ldmsim/sim/logging.hpp"

namespace ldmsim::cli {

nlohmann::json DemoKernelResult::to_json() const {
  nlohmann::json j{{"name", name},           {"summary", summary},   {"cycles", cycles}, {"dma_requests", dma_requests},
                   {"dma_bytes", dma_bytes}, {"elements", elements}, {"status", status}};
  if (!mismatch.empty()) j["mismatch"] = mismatch;
  return j;
}

namespace {

constexpr std::size_t kScaleTile = 1024;  // scale: elements per tile
constexpr std::size_t kScaleTilesPerCore = 8;
constexpr float kScale = 0.75f;
constexpr std::size_t kSumCols = 768;    // row-sum: matrix columns
constexpr std::size_t kSumChunk = 256;   // row-sum: columns per strided get
constexpr std::size_t kSumRowBlock = 8;  // row-sum: rows per strided get and per put of the sums
constexpr std::size_t kSumRowsPerCore = 16;
constexpr std::size_t kWeights = 512;  // bcast-mul: weight vector length (also the tile length)
constexpr std::size_t kMulTilesPerCore = 8;
constexpr std::size_t kCenterSlice = 2048;  // center: elements per core
constexpr std::size_t kCenterTile = 1024;

/// One device buffer per core group; buffer g lives in core group g's main-memory window.
template <typename T>
using PerGroup = std::vector<DevicePtr<T>>;
/// Host data per core group.
template <typename T>
using HostPerGroup = std::vector<std::vector<T>>;

// ---------------------------------------------------------------------------------------------------------
// Kernels (one instance per compute core)

/// y = kScale * x in tiles of kScaleTile, tiles dealt round-robin to the cores. Two input and two output
/// buffers: the get of the core's next tile is in flight while the current one is computed, and a put is
/// waited only when its buffer is needed again.
void scale_kernel(Core& core, DevicePtr<const f16> x, DevicePtr<f16> y, std::size_t n, const DemoOptions& inject) {
  Ldm& ldm = core.ldm();
  const std::array<LdmSpan<f16>, 2> in{ldm.alloc<f16>(kScaleTile), ldm.alloc<f16>(kScaleTile)};
  const std::array<LdmSpan<f16>, 2> out{ldm.alloc<f16>(kScaleTile), ldm.alloc<f16>(kScaleTile)};
  std::array<DmaHandle, 2> got{};
  std::array<DmaHandle, 2> put{};
  const std::size_t step = static_cast<std::size_t>(core.group_size()) * kScaleTile;
  const std::size_t first = static_cast<std::size_t>(core.id()) * kScaleTile;
  auto fetch = [&](std::size_t at, std::size_t b) {
    const std::size_t len = std::min(kScaleTile, n - at);
    if (inject.inject_misaligned_dma && at == first && core.cg() == 0 && core.id() == 1) {
      // Testing aid (--demo-fault): two odd-length gets (2 mod 4 bytes) instead of one. They trap
      // dma-misaligned; under the lint policy they are recorded as warnings and still move the right bytes.
      core.get(in[b].first(len - 1), x + at).wait();
      core.get(in[b].subspan(len - 1, 1), x + (at + len - 1)).wait();
      return DmaHandle{};
    }
    return core.get(in[b].first(len), x + at);
  };
  if (first < n) got[0] = fetch(first, 0);
  std::size_t b = 0;
  for (std::size_t at = first; at < n; at += step, b ^= 1) {
    if (at + step < n) got[b ^ 1] = fetch(at + step, b ^ 1);  // tile i+1 moves while tile i computes
    got[b].wait();
    put[b].wait();  // out[b] is free once its previous put completed
    const std::size_t len = std::min(kScaleTile, n - at);
    for (std::size_t i = 0; i < len; ++i) out[b][i] = f16(static_cast<float>(in[b][i]) * kScale);
    core.compute({.flops = len});
    put[b] = core.put(y + at, out[b].first(len));
    if (inject.inject_put_source_change && at == first && core.cg() == 0 && core.id() == 1) {
      // Testing aid (--demo-race): the put's source changes before its wait. The data moved at issue, so the
      // result is still right here; on hardware the put could carry the new value (checking: put-source).
      out[b][0] = f16(-1.0f);
    }
  }
  put[0].wait();
  put[1].wait();
}

/// sums[r] = sum of row r of a rows x kSumCols matrix. A block of kSumRowBlock rows is fetched kSumChunk
/// columns at a time by one strided get (blocks of kSumChunk elements, the rest of each row skipped).
void row_sum_kernel(Core& core, DevicePtr<const f16> matrix, DevicePtr<f16> sums, std::size_t rows) {
  Ldm& ldm = core.ldm();
  const LdmSpan<f16> tile = ldm.alloc<f16>(kSumRowBlock * kSumChunk);
  const LdmSpan<f16> out = ldm.alloc<f16>(kSumRowBlock);
  const std::size_t blocks = rows / kSumRowBlock;
  for (auto blk = static_cast<std::size_t>(core.id()); blk < blocks;
       blk += static_cast<std::size_t>(core.group_size())) {
    const std::size_t r0 = blk * kSumRowBlock;
    std::array<float, kSumRowBlock> acc{};
    for (std::size_t c0 = 0; c0 < kSumCols; c0 += kSumChunk) {
      core.get_strided(tile, matrix + r0 * kSumCols + c0, kSumChunk * sizeof(f16), (kSumCols - kSumChunk) * sizeof(f16))
          .wait();
      for (std::size_t r = 0; r < kSumRowBlock; ++r) {
        for (std::size_t j = 0; j < kSumChunk; ++j) acc[r] += static_cast<float>(tile[r * kSumChunk + j]);
      }
      core.compute({.flops = tile.size()});
    }
    for (std::size_t r = 0; r < kSumRowBlock; ++r) out[r] = f16(acc[r]);
    core.put(sums + r0, out).wait();
  }
}

/// y[i] = x[i] * w[i % kWeights]. Core 0 broadcasts the weights into every core's ldm with one BCAST get; a
/// group barrier tells the others they have arrived.
void bcast_mul_kernel(Core& core, DevicePtr<const f16> w, DevicePtr<const f16> x, DevicePtr<f16> y, std::size_t n) {
  Ldm& ldm = core.ldm();
  const LdmSpan<f16> weights = ldm.alloc<f16>(kWeights);  // first allocation: the same offset on every core
  const LdmSpan<f16> in = ldm.alloc<f16>(kWeights);
  const LdmSpan<f16> out = ldm.alloc<f16>(kWeights);
  if (core.id() == 0) core.bcast_get(weights, w).wait();
  core.barrier();
  for (auto t = static_cast<std::size_t>(core.id()); t < n / kWeights;
       t += static_cast<std::size_t>(core.group_size())) {
    core.get(in, x + t * kWeights).wait();
    for (std::size_t i = 0; i < kWeights; ++i) {
      out[i] = f16(static_cast<float>(in[i]) * static_cast<float>(weights[i]));
    }
    core.compute({.flops = kWeights});
    core.put(y + t * kWeights, out).wait();
  }
}

/// y = x - mean(x) over the group's vector, in two phases: every core puts the partial sum of its slice,
/// a group barrier, then every core reads all partials, forms the mean and writes its centred slice.
void center_kernel(Core& core, DevicePtr<const f16> x, DevicePtr<float> partials, DevicePtr<f16> y) {
  Ldm& ldm = core.ldm();
  const auto cores = static_cast<std::size_t>(core.group_size());
  const LdmSpan<f16> in = ldm.alloc<f16>(kCenterTile);
  const LdmSpan<f16> out = ldm.alloc<f16>(kCenterTile);
  const LdmSpan<float> mine = ldm.alloc<float>(1);
  const LdmSpan<float> all = ldm.alloc<float>(cores);
  const std::size_t base = static_cast<std::size_t>(core.id()) * kCenterSlice;

  float sum = 0.0f;  // phase 1: this core's partial sum
  for (std::size_t off = 0; off < kCenterSlice; off += kCenterTile) {
    core.get(in, x + base + off).wait();
    for (const f16 v : in) sum += static_cast<float>(v);
    core.compute({.flops = kCenterTile});
  }
  mine[0] = sum;
  core.put(partials + static_cast<std::size_t>(core.id()), mine).wait();
  core.barrier();  // every partial is in main memory

  core.get(all, partials).wait();  // phase 2: the mean, then the centred slice
  float total = 0.0f;
  for (const float p : all) total += p;
  const float mean = total / static_cast<float>(cores * kCenterSlice);
  for (std::size_t off = 0; off < kCenterSlice; off += kCenterTile) {
    core.get(in, x + base + off).wait();
    for (std::size_t i = 0; i < kCenterTile; ++i) out[i] = f16(static_cast<float>(in[i]) - mean);
    core.compute({.flops = kCenterTile});
    core.put(y + base + off, out).wait();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Host side: data, references, launch and check

/// Deterministic inputs in [-4, 4) from a fixed LCG, so the demo, its trace and its cycles are reproducible.
std::vector<f16> make_input(std::size_t n, std::uint32_t seed) {
  std::vector<f16> out(n);
  std::uint32_t state = seed * 2654435761u + 12345u;
  for (auto& v : out) {
    state = state * 1664525u + 1013904223u;
    v = f16(static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 8.0f - 4.0f);
  }
  return out;
}

/// Index of the core's group in a PerGroup.
std::size_t ix(const Core& core) {
  return static_cast<std::size_t>(core.cg());
}

class Demo {
 public:
  Demo(Machine& machine, const DemoOptions& options, std::vector<DemoKernelResult>& results)
      : machine_(machine),
        options_(options),
        results_(results),
        groups_(machine.arch().core_groups),
        cores_(machine.arch().cores_per_group()) {}

  void scale() {
    const std::size_t n = cores_ * kScaleTilesPerCore * kScaleTile - kScaleTile / 2;  // a partial last tile
    const auto x = inputs("scale.x", n, 1);
    const auto y = alloc<f16>("scale.y", n);
    HostPerGroup<f16> want(groups_);
    for (std::uint32_t g = 0; g < groups_; ++g) {
      for (const f16 v : host_x_[g]) want[g].push_back(f16(static_cast<float>(v) * kScale));
    }
    const DemoOptions inject = options_;
    run(
        "scale", "y = 0.75 * x in 1024-element tiles, double-buffered: tile i+1 is fetched while tile i computes",
        [=](Core& core) { scale_kernel(core, x[ix(core)], y[ix(core)], n, inject); }, y, want);
  }

  void row_sum() {
    const std::size_t rows = cores_ * kSumRowsPerCore;
    const auto m = inputs("row-sum.matrix", rows * kSumCols, 2);
    const auto sums = alloc<f16>("row-sum.sums", rows);
    HostPerGroup<f16> want(groups_);
    for (std::uint32_t g = 0; g < groups_; ++g) {
      for (std::size_t r = 0; r < rows; ++r) {
        float acc = 0.0f;
        for (std::size_t c = 0; c < kSumCols; ++c) acc += static_cast<float>(host_x_[g][r * kSumCols + c]);
        want[g].push_back(f16(acc));
      }
    }
    run(
        "row-sum",
        fmt::format("row sums of a {} x {} matrix; {}x{} tiles gathered by strided gets", rows, kSumCols, kSumRowBlock,
                    kSumChunk),
        [=](Core& core) { row_sum_kernel(core, m[ix(core)], sums[ix(core)], rows); }, sums, want);
  }

  void bcast_mul() {
    const std::size_t n = cores_ * kMulTilesPerCore * kWeights;
    const auto w = inputs("bcast-mul.w", kWeights, 3);
    const HostPerGroup<f16> host_w = host_x_;
    const auto x = inputs("bcast-mul.x", n, 4);
    const auto y = alloc<f16>("bcast-mul.y", n);
    HostPerGroup<f16> want(groups_);
    for (std::uint32_t g = 0; g < groups_; ++g) {
      for (std::size_t i = 0; i < n; ++i) {
        want[g].push_back(f16(static_cast<float>(host_x_[g][i]) * static_cast<float>(host_w[g][i % kWeights])));
      }
    }
    run(
        "bcast-mul", "y = x * w with a 512-element weight vector broadcast (BCAST) to every core of the group",
        [=](Core& core) { bcast_mul_kernel(core, w[ix(core)], x[ix(core)], y[ix(core)], n); }, y, want);
  }

  void center() {
    const std::size_t n = cores_ * kCenterSlice;
    const auto x = inputs("center.x", n, 5);
    const auto partials = alloc<float>("center.partials", cores_);
    const auto y = alloc<f16>("center.y", n);
    HostPerGroup<f16> want(groups_);
    for (std::uint32_t g = 0; g < groups_; ++g) {
      float total = 0.0f;
      for (std::size_t c = 0; c < cores_; ++c) {
        float partial = 0.0f;
        for (std::size_t i = 0; i < kCenterSlice; ++i) partial += static_cast<float>(host_x_[g][c * kCenterSlice + i]);
        total += partial;
      }
      const float mean = total / static_cast<float>(n);
      for (const f16 v : host_x_[g]) want[g].push_back(f16(static_cast<float>(v) - mean));
    }
    run(
        "center", "y = x - mean(x): partial sums per core, a group barrier, then every core subtracts the mean",
        [=](Core& core) { center_kernel(core, x[ix(core)], partials[ix(core)], y[ix(core)]); }, y, want);
  }

 private:
  /// n elements in every core group's window.
  template <typename T>
  PerGroup<T> alloc(const std::string& name, std::size_t n) {
    PerGroup<T> out;
    for (std::uint32_t g = 0; g < groups_; ++g) {
      out.push_back(
          machine_.alloc<T>(n, AllocOptions{.cg = static_cast<int>(g), .name = fmt::format("{}[{}]", name, g)}));
      live_.push_back(out.back().addr());
    }
    return out;
  }

  /// Allocates and uploads fresh inputs per group (kept in host_x_ for the reference).
  PerGroup<const f16> inputs(const std::string& name, std::size_t n, std::uint32_t seed) {
    const PerGroup<f16> buffers = alloc<f16>(name, n);
    host_x_.assign(groups_, {});
    PerGroup<const f16> out;
    for (std::uint32_t g = 0; g < groups_; ++g) {
      host_x_[g] = make_input(n, seed * 97u + g);
      machine_.upload(buffers[g], host_x_[g]);
      out.emplace_back(buffers[g]);
    }
    return out;
  }

  /// Launches `kernel` on every core group, measures it, then checks `y` against `want` and frees the buffers.
  void run(std::string name, std::string summary, Kernel kernel, const PerGroup<f16>& y,
           const HostPerGroup<f16>& want) {
    DemoKernelResult r;
    r.name = std::move(name);
    r.summary = std::move(summary);
    const RunStats before = machine_.stats();
    auto measure = [&] {
      const RunStats after = machine_.stats();
      r.cycles = after.cycles - before.cycles;
      r.dma_requests = after.dma_requests() - before.dma_requests();
      r.dma_bytes = after.dma_bytes() - before.dma_bytes();
    };
    try {
      machine_.launch_kernel(LaunchSpec{.name = r.name}, std::move(kernel)).join();
    } catch (const Fault&) {
      measure();
      r.status = "fault";
      results_.push_back(std::move(r));
      throw;
    }
    measure();
    r.status = "ok";
    std::uint64_t wrong = 0;
    for (std::uint32_t g = 0; g < groups_; ++g) {
      std::vector<f16> got(want[g].size());
      machine_.download(got, DevicePtr<const f16>(y[g]));
      r.elements += got.size();
      for (std::size_t i = 0; i < got.size(); ++i) {
        if (got[i] == want[g][i]) continue;
        if (wrong++ == 0) {
          r.mismatch =
              fmt::format("core group {} element {}: got {} (0x{:04x}), expected {} (0x{:04x})", g, i,
                          static_cast<float>(got[i]), got[i].bits, static_cast<float>(want[g][i]), want[g][i].bits);
        }
      }
    }
    if (wrong > 0) {
      r.status = "mismatch";
      r.mismatch += fmt::format(" ({} of {} elements wrong)", wrong, r.elements);
    }
    logger("tools")->info("demo kernel {}: {} cycles, {} DMA requests, {} bytes, {}", r.name, r.cycles, r.dma_requests,
                          r.dma_bytes, r.status);
    results_.push_back(std::move(r));
    for (const DeviceAddr addr : live_) machine_.free_bytes(addr);
    live_.clear();
  }

  Machine& machine_;
  const DemoOptions& options_;
  std::vector<DemoKernelResult>& results_;
  std::uint32_t groups_;
  std::size_t cores_;
  HostPerGroup<f16> host_x_;      // the inputs most recently made
  std::vector<DeviceAddr> live_;  // buffers of the current kernel
};

}  // namespace

void run_demo(Machine& machine, const DemoOptions& options, std::vector<DemoKernelResult>& results) {
  Demo demo(machine, options, results);
  demo.scale();
  demo.row_sum();
  demo.bcast_mul();
  demo.center();
}

}  // namespace ldmsim::cli
