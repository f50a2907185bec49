// What the attention kernel is estimated to take on an arch with its operands in each group's own memory (the
// placement's kernel estimate, BoundOp::kernel_estimate): a group's items one after another, each the longer of its
// DMA (its reads and puts priced by the arch's timing model on the engine's channels) and its busiest core's
// products and program, then the last item's compute and a request's latency. The placement prices remote bytes
// itself. It is not the simulation.
#include <algorithm>
#include <memory>

#include "attention_impl.hpp"
#include "estimate_request.hpp"
#include "ldmsim/dma/timing_model.hpp"

namespace ldmsim::fusion {

double estimate_attention_cycles(const FusedProgram& program, std::size_t score_input, const AttentionShape& s,
                                 const Arch& arch) {
  const std::uint64_t groups = std::max<std::uint32_t>(1, arch.core_groups), cores = arch.cores_per_group();
  // The items as choose_attention_mapping deals them on this arch.
  const std::uint64_t parts = std::min<std::uint64_t>(s.s, ceil_div(groups, std::max<std::uint64_t>(1, s.batches)));
  const std::uint64_t items = s.batches * parts, per_group = ceil_div(items, groups);
  const std::uint64_t rows = ceil_div(s.s, parts), per_core = ceil_div(rows, cores);
  const std::uint64_t tile = std::min<std::uint64_t>(per_core, 16), busy = std::min(rows, cores);
  const std::unique_ptr<TimingModel> model = make_timing_model(arch);
  const std::size_t channels = std::max<std::size_t>(1, arch.dma.channels());
  const DmaRequest probe = contiguous_request(DmaOp::kGet, arch.dma.transaction_bytes, arch);
  const double latency = static_cast<double>(model->schedule(probe, 0, 0).end) - model->service_cycles(probe);
  // One item's engine time: Kt, V and Q cut as the kernel cuts them (a part per 2 KiB, one per channel at most),
  // a request per per-batch input row, and the puts of Y (a mesh row's rows together where the arch has RMA).
  double service = 0;
  const auto read_cut = [&](std::uint64_t elements) {
    const std::uint64_t bytes = elements * sizeof(f16);
    const std::uint64_t n = std::clamp<std::uint64_t>(bytes / 2048, 1, channels);
    service +=
        static_cast<double>(n) * model->service_cycles(contiguous_request(DmaOp::kGet, ceil_div(bytes, n), arch));
  };
  read_cut(s.d * s.t);
  read_cut(s.t * s.e);
  read_cut(rows * s.d);
  const std::vector<bool> per_batch = per_batch_inputs(program, score_input);
  for (const bool b : per_batch) {
    if (b) service += model->service_cycles(contiguous_request(DmaOp::kGet, s.t * sizeof(f16), arch));
  }
  const bool gathered = arch.rma.available && rows >= cores && per_core <= tile && arch.cols >= 2 &&
                        cores % arch.cols == 0 && per_core * s.e * sizeof(f16) <= 1024;
  if (gathered) {
    service += static_cast<double>(cores / arch.cols) *
               model->service_cycles(contiguous_request(DmaOp::kPut, per_core * arch.cols * s.e * sizeof(f16), arch));
  } else {
    service += static_cast<double>(busy * ceil_div(per_core, tile)) *
               model->service_cycles(contiguous_request(DmaOp::kPut, tile * s.e * sizeof(f16), arch));
  }
  const double engine = service / static_cast<double>(channels);
  // The busiest core's compute per item: both products (charged as the matrix engine's tiles) and the program.
  const ComputeModel& c = arch.compute;
  double compute = 0;
  for (std::uint64_t done = 0; done < per_core; done += tile) {
    const std::uint64_t n = std::min(tile, per_core - done);
    compute += static_cast<double>(c.cycles(c.matmul_tile(DataType::kF32, n, s.t, s.d, false)) +
                                   c.cycles(c.matmul_tile(DataType::kF32, n, s.e, s.t, false)));
  }
  double step_flops = 0;
  for (const FusedStep& step : program.steps) step_flops += static_cast<double>(step.flops);
  compute += step_flops * static_cast<double>(per_core * s.t) / std::max(1e-9, arch.flops_per_cycle);
  return static_cast<double>(per_group) * std::max(engine, compute) + compute + latency;
}

}  // namespace ldmsim::fusion
