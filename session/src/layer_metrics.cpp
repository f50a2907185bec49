// Per-layer ldm, intensity, bandwidth and roofline figures of stats.json (see layer_metrics.hpp).
#include "ldmsim/session/layer_metrics.hpp"

#include <algorithm>

#include "ldmsim/dma/timing_model.hpp"
#include "ldmsim/sim/compute_model.hpp"
#include "ldmsim/trace/recorder.hpp"

namespace ldmsim {

namespace {

/// A get long enough that per-request overheads vanish: its bytes over the model's service time are the
/// bandwidth of one channel.
constexpr std::uint64_t kProbeBytes = 64ull << 20;

std::optional<double> peak_dma_bytes_per_cycle_per_group(const Arch& arch) {
  const std::unique_ptr<TimingModel> model = make_timing_model(arch);
  DmaRequest probe;
  probe.length = kProbeBytes;
  const double cycles = model->service_cycles(probe);
  if (cycles <= 0) return std::nullopt;
  return static_cast<double>(kProbeBytes) * static_cast<double>(arch.dma.channels()) / cycles;
}

double ratio(double num, double den) {
  return den > 0 ? num / den : 0.0;
}

}  // namespace

Roofline Roofline::of(const Arch& arch) {
  Roofline roof;
  roof.peak_flops_per_second =
      arch.compute.peak_flops_per_cycle(DataType::kF32) * static_cast<double>(arch.total_cores()) * arch.clock_hz;
  if (const auto per_group = peak_dma_bytes_per_cycle_per_group(arch)) {
    roof.peak_dma_bytes_per_second = *per_group * static_cast<double>(arch.core_groups) * arch.clock_hz;
  }
  return roof;
}

nlohmann::json Roofline::to_json() const {
  nlohmann::json out = {{"peak_flops_per_second", peak_flops_per_second},
                        {"peak_dma_bytes_per_second", nullptr},
                        {"ridge_intensity", nullptr}};
  if (peak_dma_bytes_per_second) {
    out["peak_dma_bytes_per_second"] = *peak_dma_bytes_per_second;
    out["ridge_intensity"] = peak_flops_per_second / *peak_dma_bytes_per_second;
  }
  return out;
}

void add_layer_metrics(nlohmann::json& op, const Roofline& roof) {
  const auto flops = static_cast<double>(op.at("flops").get<std::uint64_t>());
  const std::uint64_t bytes = op.at("dma_bytes").get<std::uint64_t>();
  const std::uint64_t remote = op.at("dma_remote_bytes").get<std::uint64_t>();
  const double seconds = op.at("seconds").get<double>();
  op["dma_local_bytes"] = bytes - std::min(bytes, remote);
  op["arithmetic_intensity"] = bytes > 0 ? nlohmann::json(flops / static_cast<double>(bytes)) : nlohmann::json();
  op["achieved_dma_bytes_per_second"] = ratio(static_cast<double>(bytes), seconds);
  op["achieved_flops_per_second"] = ratio(flops, seconds);
  // The least time the roof allows: the slower of computing at peak and moving the bytes at peak bandwidth. Over
  // the simulated time it is the usual attained / attainable performance, and it stays defined for flop-less ops.
  const double compute_seconds = ratio(flops, roof.peak_flops_per_second);
  const double dma_seconds =
      roof.peak_dma_bytes_per_second ? ratio(static_cast<double>(bytes), *roof.peak_dma_bytes_per_second) : 0.0;
  const double least = std::max(compute_seconds, dma_seconds);
  op["roofline_limit"] = dma_seconds > compute_seconds ? "dma" : "compute";
  op["roofline_seconds"] = least;
  op["roofline_fraction"] = ratio(least, seconds);
}

void add_run_layer_metrics(nlohmann::json& stats, const Roofline& roof,
                           const std::vector<std::uint64_t>& ldm_high_waters) {
  nlohmann::json& ops = stats.at("ops");
  const bool with_ldm = ldm_high_waters.size() == ops.size();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    add_layer_metrics(ops[i], roof);
    if (with_ldm) ops[i]["ldm_high_water"] = ldm_high_waters[i];
  }
  stats["roofline"] = roof.to_json();
}

LayerLdmProbe::LayerLdmProbe(const Machine& machine) : machine_(machine) {
  const std::vector<const TraceRecorder*> recorders = machine.trace();
  available_ = !recorders.empty() &&
               std::all_of(recorders.begin(), recorders.end(), [](const TraceRecorder* r) { return r->enabled(); });
  if (available_) {
    std::vector<std::uint64_t> start;
    for (const TraceRecorder* r : recorders) start.push_back(r->marker_count());
    ends_.push_back(std::move(start));
  }
}

void LayerLdmProbe::op_done() {
  if (!available_) return;
  std::vector<std::uint64_t> counts;
  for (const TraceRecorder* r : machine_.trace()) counts.push_back(r->marker_count());
  ends_.push_back(std::move(counts));
}

std::vector<std::uint64_t> LayerLdmProbe::high_waters() const {
  if (ends_.size() < 2) return {};
  std::vector<std::uint64_t> per_op(ends_.size() - 1, 0);
  const std::vector<const TraceRecorder*> recorders = machine_.trace();
  for (std::size_t g = 0; g < recorders.size(); ++g) {
    const std::vector<Marker> markers = recorders[g]->markers();
    std::size_t op = 0;
    for (std::uint64_t i = ends_.front()[g]; i < markers.size() && op < per_op.size(); ++i) {
      while (op < per_op.size() && i >= ends_[op + 1][g]) ++op;
      if (op < per_op.size() && markers[i].kind == MarkerKind::kCoreExit) {
        per_op[op] = std::max<std::uint64_t>(per_op[op], markers[i].value);
      }
    }
  }
  return per_op;
}

}  // namespace ldmsim
