// The frame a group runs with (see fusion_internal.hpp, choose_frame).
#include "fusion_internal.hpp"
#include "ldmsim/sim/logging.hpp"

namespace ldmsim::fusion {

namespace {

/// A point-wise group leaves its preferred frame only for one priced this much cheaper (the estimate is coarse).
constexpr double kCheaperBy = 0.8;
/// Rows on one group when priced at most this much dearer than dealt to every group (choose_frame).
constexpr double kLocalBias = 1.1;

}  // namespace

FrameChoice choose_frame(const Graph& graph, const std::vector<std::size_t>& ops, std::vector<std::size_t>& backbones,
                         const Arch& arch, StagingPolicy policy, std::uint32_t cores) {
  const std::vector<FusionFrame> frames = frame_candidates(graph, ops, &backbones);
  FrameChoice chosen;
  std::size_t first = frames.size();
  for (std::size_t i = 0; i < frames.size(); ++i) {
    chosen.frame = frames[i];
    chosen.low = lower_group(graph, ops, frames[i]);
    chosen.mapping = choose_fused_mapping(chosen.low.program, arch, policy, cores);
    if (chosen.mapping) {
      first = i;
      break;
    }
  }
  // A point-wise group's rows are cut where its longest row still fits: a small tensor is then a row or two, run by
  // as many cores while the others idle (a GELU on [16, 256]: one core). Then shorter rows are tried, priced, up to
  // a core group's worth of them. Not when a core group's worth of cores is busy already: the estimate takes a
  // tile's rows for one request, and shorter rows of a padded, strided or broadcast operand are read a row at a time
  // (DenseNet's 7x7 batch norms, 60x the requests); nor rows for more than a group, dealt to every group, which
  // then waits for the slowest (EfficientNet-B0's SiLU on [1, 672, 2, 2] as 672 rows: faster alone, slower after
  // its producer).
  if (first == frames.size() || !backbones.empty() || chosen.mapping->team != 1 ||
      chosen.mapping->busy_workers(chosen.frame.rows()) >= arch.cores_per_group()) {
    return chosen;
  }
  // A frame's rows run on group 0 alone when they need at most its cores and that is priced at most 10% dearer
  // than dealing them to every group: the estimate prices an op alone, and rows dealt to every group also wait for
  // the slowest of them, which one group does not.
  const auto dealing = [&](const LoweredGroup& low, FusedMapping mapping) {
    mapping.on_one_group = false;
    double cycles = estimate_pointwise_cycles(low.program, mapping, arch);
    if (mapping.busy_workers(low.program.frame.rows()) <= arch.cores_per_group()) {
      FusedMapping one = mapping;
      one.on_one_group = true;
      if (const double local = estimate_pointwise_cycles(low.program, one, arch); local <= kLocalBias * cycles) {
        mapping = one;
        cycles = local;
      }
    }
    return std::pair{mapping, cycles};
  };
  const auto [first_mapping, preferred] = dealing(chosen.low, *chosen.mapping);
  chosen.mapping = first_mapping;
  double best = preferred;
  for (std::size_t i = first + 1; i < frames.size(); ++i) {
    LoweredGroup low = lower_group(graph, ops, frames[i]);
    const std::optional<FusedMapping> mapping = choose_fused_mapping(low.program, arch, policy, cores);
    if (!mapping || mapping->team != 1 || mapping->busy_workers(frames[i].rows()) > arch.cores_per_group()) continue;
    const auto [placed, cycles] = dealing(low, *mapping);
    if (cycles < best && cycles <= kCheaperBy * preferred) {
      best = cycles;
      chosen = FrameChoice{frames[i], std::move(low), placed};
    }
  }
  if (best < preferred) {
    logger("fusion")->debug(
        "point-wise group of {} op(s): frame {}, {} ({:.0f} cycles estimated) instead of {} ({:.0f})", ops.size(),
        chosen.frame.str(), chosen.mapping->str(), best, frames[first].str(), preferred);
  }
  return chosen;
}

}  // namespace ldmsim::fusion
