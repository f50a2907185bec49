// What a point-wise fused kernel's mapping is estimated to cost on an arch: the busiest core's resident inputs read
// chunk by chunk, then its tiles, each read (its requests priced by the arch's DMA timing model, the engine's
// channels shared by the group's busy cores, a remote group's bytes over its link), computed and written, in the
// home group and (rows dealt to every group) in another. The fusion pass compares frames with it; it is not the
// simulation.
#include <algorithm>
#include <memory>

#include "estimate_request.hpp"
#include "ldmsim/dma/timing_model.hpp"
#include "ldmsim/kernels/fused_kernel.hpp"

namespace ldmsim {

using fusion::ceil_div;
using fusion::contiguous_request;

namespace {

/// One direction (reads or writes) of one core's tile: a request per external value.
struct Transfer {
  double channel = 0;  ///< engine time of all the requests
  double longest = 0;  ///< of the longest
  double bytes = 0;
  std::size_t requests = 0;
};

}  // namespace

double estimate_pointwise_cycles(const FusedProgram& p, const FusedMapping& m, const Arch& arch) {
  const FusionFrame& f = p.frame;
  const std::uint64_t per_unit = m.row_pairs ? 2 : 1, units = ceil_div(f.rows(), per_unit);
  const std::uint64_t busy = std::max<std::uint64_t>(1, m.busy_workers(f.rows()));
  const std::uint64_t rows = ceil_div(units, busy) * per_unit;  // the busiest core's
  const std::uint64_t tile = std::max<std::uint64_t>(1, std::min(m.tile_rows, rows)), tiles = ceil_div(rows, tile);
  const std::unique_ptr<TimingModel> model = make_timing_model(arch);
  // The model's latency: a request's reply after its service on an idle engine.
  const DmaRequest probe = contiguous_request(DmaOp::kGet, arch.dma.transaction_bytes, arch);
  const double service_probe = model->service_cycles(probe);
  const double latency = static_cast<double>(model->schedule(probe, 0, 0).end) - service_probe;
  const auto transfer = [&](DmaOp op, const FusedValue& v, Transfer& t) {
    const std::uint64_t bytes = tile * v.row_elements(f) * sizeof(f16);
    const double service = model->service_cycles(contiguous_request(op, bytes, arch));
    t.channel += service;
    t.longest = std::max(t.longest, service);
    t.bytes += static_cast<double>(bytes);
    ++t.requests;
  };
  Transfer reads, writes;
  // Before its tiles each busy core reads the resident inputs through a tile-sized buffer, a chunk at a time, each
  // waited for (priced as if none were read once for the group): short rows make many chunks.
  const std::uint64_t chunk = std::max<std::uint64_t>(1, tile * f.k() * f.i());
  double resident = 0, resident_chunks = 0, resident_bytes = 0;  // one core's, one after another
  for (std::size_t k = 0; k < p.inputs.size(); ++k) {
    const FusedValue& v = p.values[p.inputs[k]];
    if (!m.resident[k]) {
      transfer(DmaOp::kGet, v, reads);
      continue;
    }
    const std::uint64_t n = v.rows(f) * v.row_elements(f), chunks = ceil_div(n, chunk);
    const double service =
        model->service_cycles(contiguous_request(DmaOp::kGet, std::min(n, chunk) * sizeof(f16), arch));
    resident += static_cast<double>(chunks) * (latency + service);
    resident_chunks += static_cast<double>(chunks);
    resident_bytes += static_cast<double>(n * sizeof(f16));
  }
  for (const std::size_t v : p.outputs) transfer(DmaOp::kPut, p.values[v], writes);
  std::uint64_t flops = 0;  // per tile
  for (const FusedStep& s : p.steps) {
    const FusedValue& r = p.values[s.result];
    flops += s.flops * (r.k ? f.k() : 1) * (r.i ? f.i() : 1) * tile;
  }
  const double compute = static_cast<double>(flops) / arch.flops_per_cycle;
  const double channels = static_cast<double>(std::max<std::size_t>(1, arch.dma.channels()));
  const auto groups = static_cast<std::uint64_t>(arch.core_groups);
  const DmaRemoteArch& remote = arch.dma.remote;
  // A direction's time for a core among `cores` busy ones of its group: its requests go out together, on the
  // channels the group's busy cores share; a remote group's then cross its link one after another.
  const auto phase = [&](const Transfer& t, double cores, bool far) {
    if (t.requests == 0) return 0.0;
    double time = latency + std::max(t.longest, cores * t.channel / channels);
    if (far && remote.bytes_per_cycle > 0) time += cores * t.bytes / remote.bytes_per_cycle;
    if (far) time += remote.latency_cycles;
    return time;
  };
  const bool one_group = m.one_group(arch.cores_per_group());
  const auto group_cycles = [&](std::uint64_t g) {
    // On one group, the first has them all; else the workers are dealt to the groups in turn: group g has the
    // workers g, g + groups, ...
    const auto cores = static_cast<double>(one_group ? (g == 0 ? busy : 0) : busy > g ? ceil_div(busy - g, groups) : 0);
    if (cores == 0) return 0.0;
    const bool far = g != 0;
    double first = resident * std::max(1.0, cores / channels);
    if (far) {
      first += resident_chunks * remote.latency_cycles;
      if (remote.bytes_per_cycle > 0) first += cores * resident_bytes / remote.bytes_per_cycle;
    }
    return first + static_cast<double>(tiles) * (phase(reads, cores, far) + compute) + phase(writes, cores, far);
  };
  return std::max(group_cycles(0), group_cycles(1));
}

}  // namespace ldmsim
