// Per-layer figures a kernel developer acts on, added to each entry of stats.json's "ops": ldm high-water, DMA
// bytes local and remote, arithmetic intensity, achieved bandwidth and flop rate, and where the layer sits under
// the machine's roofline (peak fp32 flops and peak DMA bandwidth). See docs/workload-format.md "stats.json".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "ldmsim/runtime/machine.hpp"
#include "ldmsim/sim/arch.hpp"

namespace ldmsim {

/// The machine's roof: peak fp32 flops of every core and peak DMA bandwidth of every core group (what the arch's
/// timing model serves for a long contiguous get; unset for a model that does not price bandwidth, `ideal`).
struct Roofline {
  double peak_flops_per_second = 0;
  std::optional<double> peak_dma_bytes_per_second;

  static Roofline of(const Arch& arch);
  /// {peak_flops_per_second, peak_dma_bytes_per_second (null: unbounded), ridge_intensity (flops per byte)}.
  nlohmann::json to_json() const;
};

/// Adds to one stats.json op entry (which has flops, dma_bytes, dma_remote_bytes and seconds): dma_local_bytes,
/// arithmetic_intensity (flops per DMA byte; null without DMA), achieved_dma_bytes_per_second,
/// achieved_flops_per_second, roofline_limit ("compute" or "dma": the roof that bounds the layer at its intensity),
/// roofline_seconds (the least time the roof allows) and roofline_fraction (that over its simulated seconds).
void add_layer_metrics(nlohmann::json& op, const Roofline& roof);

/// Every op entry of `stats` (stats.json) through add_layer_metrics, each op's ldm_high_water from `ldm_high_waters`
/// when it has one per op (empty: the run recorded no trace; the field is left out), and stats["roofline"].
void add_run_layer_metrics(nlohmann::json& stats, const Roofline& roof,
                           const std::vector<std::uint64_t>& ldm_high_waters);

/// Per-layer ldm high-water marks, read from the trace's core-exit markers (each carries its launch's high-water):
/// op_done() after each op remembers how far each core group's markers reached, so the markers between two ops
/// belong to the second (its launches and the re-layouts before it). Needs the machine to record a trace.
class LayerLdmProbe {
 public:
  explicit LayerLdmProbe(const Machine& machine);
  bool available() const { return available_; }
  void op_done();
  /// Per op, the largest ldm footprint of any core in its launches (0 for an op that launched nothing).
  std::vector<std::uint64_t> high_waters() const;

 private:
  const Machine& machine_;
  bool available_ = false;
  std::vector<std::vector<std::uint64_t>> ends_;  ///< per op, per group: marker count after it
};

}  // namespace ldmsim
