// The estimator of the cost-aware placement choice (placement_choice.hpp): a roofline per core group, priced from
// the arch's own parameters. A group's launch takes its launch cost plus the longest of its compute (flops over its
// cores' peak), its local DMA (bytes over the bandwidth the timing model gives a typical request) and its remote DMA
// (over the group's link, which overlaps with the local engine); on a preset each term is scaled by the factor fitted
// to simulated runs (placement_calibration.hpp). An op takes its slowest group.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ldmsim/dma/timing_model.hpp"
#include "ldmsim/graph/placement_choice.hpp"
#include "ldmsim/graph/split.hpp"
#include "ldmsim/kernels/attention_kernel.hpp"
#include "ldmsim/sim/compute_model.hpp"

namespace ldmsim {

namespace {

/// The request size kernels typically move: a 16 KiB streaming tile split over the cores' double buffers is
/// 4 KiB; matrix blocks are of the same order.
constexpr std::uint64_t kTypicalRequestBytes = 4096;

const TensorNode& operand(const Graph& graph, const OpNode& op, std::size_t k) {
  return graph.tensor(k < op.inputs.size() ? op.inputs[k] : op.outputs[k - op.inputs.size()]);
}

double region_bytes(const TensorNode& tensor, const TensorRegion& r) {
  const Shape& shape = tensor.shape;
  const double all = static_cast<double>(tensor.logical_bytes());
  if (r.whole || shape[r.axis] == 0) return all;
  return all * static_cast<double>(r.end - r.begin) / static_cast<double>(shape[r.axis]);
}

/// Ops that run on the matrix multiply engine: fc, gemm, matmul and convs (a grouped or depthwise conv, which reads
/// each input once and computes on the plain vector rate, is not one).
bool matrix_family(const Graph& graph, const OpNode& op) {
  const OperatorKind* kind = graph.registry().find(op.type);
  const SplitRule rule = kind == nullptr ? SplitRule::kNone : kind->traits().split;
  return rule == SplitRule::kMatrix || (rule == SplitRule::kConv && op.bound->split_geometry().groups == 1);
}

/// Classes whose kernels estimate themselves (BoundOp::kernel_estimate): the matrix engine's ops (convs of one
/// group, fc, gemm, matmul) and attention kernels.
bool asks_kernel(CostClass cls) {
  return cls == CostClass::kConv || cls == CostClass::kPointwiseConv || cls == CostClass::kMatrix ||
         cls == CostClass::kAttention;
}

/// Bytes of the part of `need` that `have` holds (both regions of one tensor).
double overlap_bytes(const TensorNode& tensor, const TensorRegion& need, const TensorRegion& have) {
  if (have.whole) return region_bytes(tensor, need);
  if (need.whole) return region_bytes(tensor, have);
  if (need.axis != have.axis) {  // a box: need's range of its axis, have's of another
    return region_bytes(tensor, need) * static_cast<double>(have.end - have.begin) /
           static_cast<double>(std::max<std::uint64_t>(1, tensor.shape[have.axis]));
  }
  const std::uint64_t begin = std::max(need.begin, have.begin), end = std::min(need.end, have.end);
  if (end <= begin) return 0;
  return region_bytes(tensor, TensorRegion{false, need.axis, begin, end});
}

/// True when `reader`'s pieces read region `r` of its input `t` in place from a whole copy (rows_in_place).
bool reads_rows_in_place(const Graph& graph, const OpNode* reader, std::size_t t, const TensorRegion& r) {
  if (reader == nullptr) return false;
  const std::size_t k = reader->input_index(t);
  return k < reader->inputs.size() && rows_in_place(graph, *reader, k, r);
}

/// True when `reader`'s pieces (split by `rule`) read channels `r` of its input `t` in place (channels_in_place).
bool reads_channels_in_place(const Graph& graph, const OpNode* reader, std::string_view rule, std::size_t t,
                             const TensorRegion& r) {
  if (reader == nullptr) return false;
  const std::size_t k = reader->input_index(t);
  return k < reader->inputs.size() && channels_in_place(graph, *reader, rule, k, r);
}

/// True when `reader` is fc, gemm or matmul: its pieces read a whole operand they need whole where it lies, in
/// whole rows. A conv's pieces read it in place too, but its tiles' short runs each wait on the link's latency
/// there, which a gather into the piece's own memory prices closer (wide ResNet-50's layer2 convs cut by output
/// channels on sw26010 ran 176 k cycles where the link's time alone estimated 118 k).
bool reads_matrix_in_place(const Graph& graph, const OpNode* reader) {
  return reader != nullptr && matrix_family(graph, *reader) && !reader->bound->split_geometry().window;
}

}  // namespace

PlacementCostModel::PlacementCostModel(const Arch& arch, bool calibrated, std::shared_ptr<KernelEstimates> kernels)
    : arch_(arch),
      group_arch_(arch),
      calibration_(calibrated ? placement_calibration(arch.name) : std::nullopt),
      kernels_(kernels ? std::move(kernels) : std::make_shared<KernelEstimates>()),
      timing_(make_timing_model(arch)) {
  group_arch_.core_groups = 1;
  read_bytes_per_cycle_ = rate(DmaOp::kGet, kTypicalRequestBytes);
  write_bytes_per_cycle_ = rate(DmaOp::kPut, kTypicalRequestBytes);
  remote_bytes_per_cycle_ = arch.dma.remote.bytes_per_cycle;
  const double latency = arch.dma.timing.value("latency_cycles", 0.0);
  launch_cycles_ = 2 * latency + arch.node_barrier_cycles + arch.dma.remote.latency_cycles;
  const double cores = arch.cores_per_group();
  // The matrix engine's rate: a square fp16 tile as large as a core's ldm holds three of, double-buffered, priced
  // by the compute model (register blocking, ldm accesses, loop overheads).
  const auto tile = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(arch.ldm_bytes) / 2 / 3 / 2));
  const KernelWork work = arch.compute.matmul_tile(DataType::kF16, tile, tile, tile, true);
  const double tile_cycles = static_cast<double>(std::max<std::uint64_t>(1, arch.compute.cycles(work)));
  matrix_flops_per_cycle_ = cores * 2.0 * static_cast<double>(tile * tile * tile) / tile_cycles;
  flops_per_cycle_ = cores * std::max(1e-9, arch.flops_per_cycle);
}

double PlacementCostModel::rate(DmaOp op, double block) const {
  const std::uint64_t length =
      std::max<std::uint64_t>(4, static_cast<std::uint64_t>(std::min<double>(block, kTypicalRequestBytes)));
  return priced_rate(op, length);
}

double PlacementCostModel::priced_rate(DmaOp op, std::uint64_t length) const {
  return rates_.get_or(length * 2 + (op == DmaOp::kPut ? 1 : 0), [&] {
    DmaRequest request;
    request.op = op;
    request.length = length;
    const double service = timing_->service_cycles(request);
    // A model that does not price requests (ideal): bandwidth bounded only by the remote link.
    return service > 0 ? static_cast<double>(arch_.dma.channels()) * static_cast<double>(length) / service : 1e12;
  });
}

CostClass PlacementCostModel::cost_class(const Graph& graph, const OpNode& op) {
  const OperatorKind* kind = graph.registry().find(op.type);
  const SplitRule rule = kind == nullptr ? SplitRule::kNone : kind->traits().split;
  if (rule == SplitRule::kConv) {
    const SplitGeometry g = op.bound->split_geometry();
    if (g.groups != 1) return CostClass::kVectorConv;
    return g.kernel[0] * g.kernel[1] == 1 ? CostClass::kPointwiseConv : CostClass::kConv;
  }
  if (rule == SplitRule::kMatrix) return CostClass::kMatrix;
  if (rule == SplitRule::kPool) return CostClass::kPool;
  if (rule == SplitRule::kConcat) return CostClass::kConcat;
  if (rule == SplitRule::kElementwise) return CostClass::kElementwise;
  if (op.type == "attention") return CostClass::kAttention;
  return op.type == "fused" ? CostClass::kFused : CostClass::kOther;
}

std::optional<double> PlacementCostModel::kernel_cycles(const BoundOp& bound, CostClass cls, const Arch& arch) const {
  if (!asks_kernel(cls)) return std::nullopt;
  return bound.kernel_estimate(arch, *kernels_);
}

Estimate PlacementCostModel::priced(const GroupLoad& load, CostClass cls, std::optional<double> kernel) const {
  const bool matrix = cls == CostClass::kConv || cls == CostClass::kPointwiseConv || cls == CostClass::kMatrix;
  Estimate e;
  e.terms.compute = kernel ? *kernel : load.flops / (matrix ? matrix_flops_per_cycle_ : flops_per_cycle_);
  e.terms.local = kernel ? 0.0 : load.read_bytes / read_bytes_per_cycle_ + load.write_bytes / write_bytes_per_cycle_;
  e.terms.remote = remote_bytes_per_cycle_ > 0 ? load.remote_bytes / remote_bytes_per_cycle_ : 0;
  e.terms.launch = launch_cycles_;
  const TermFactors f = calibration_ ? calibration_->of(cls) : TermFactors{};
  e.cycles = f.launch * e.terms.launch +
             std::max(f.compute * e.terms.compute, std::max(f.local * e.terms.local, f.remote * e.terms.remote));
  return e;
}

namespace {

/// The slower of two estimates.
const Estimate& slower(const Estimate& a, const Estimate& b) {
  return b.cycles > a.cycles ? b : a;
}

/// `a` followed by `b`: cycles and terms add.
Estimate& operator+=(Estimate& a, const Estimate& b) {
  a.cycles += b.cycles;
  a.terms.compute += b.terms.compute, a.terms.local += b.terms.local, a.terms.remote += b.terms.remote;
  a.terms.launch += b.terms.launch, a.terms.exchange += b.terms.exchange;
  return a;
}

}  // namespace

GroupLoad piece_load(const Graph& graph, const OpNode& op, const std::vector<TensorRegion>& regions, double fraction) {
  GroupLoad load;
  load.flops = static_cast<double>(op.bound->cost().flops) * fraction;
  const bool matrix = matrix_family(graph, op);
  for (std::size_t k = 0; k < regions.size(); ++k) {
    const double bytes = region_bytes(operand(graph, op, k), regions[k]);
    if (k >= op.inputs.size()) {
      load.write_bytes += bytes;
    } else if (matrix && k == 0 && op.bound->split_geometry().window) {
      // A conv reads each input element once per kernel tap that covers it (its tiles of B are built in ldm); a
      // stride skips all but one in stride_h x stride_w of a tap's elements.
      const SplitGeometry g = op.bound->split_geometry();
      const double taps =
          static_cast<double>(g.kernel[0] * g.kernel[1]) / static_cast<double>(g.stride[0] * g.stride[1]);
      load.read_bytes += bytes * std::max(1.0, taps);
    } else {
      load.read_bytes += bytes;
    }
  }
  return load;
}

Estimate PlacementCostModel::whole(const Graph& graph, const OpNode& op) const {
  if (op.bound->reinterprets_input()) return {};  // a hand-over: no kernel
  const std::vector<TensorRegion> regions(op.inputs.size() + op.outputs.size(), TensorRegion{});
  const double groups = arch_.core_groups;
  GroupLoad load = piece_load(graph, op, regions, 1.0 / groups);
  load.read_bytes /= groups;
  load.write_bytes /= groups;
  // A conv's groups each compute some of every filter's outputs: each reads the weights whole.
  if (op.bound->split_geometry().window && matrix_family(graph, op) && op.inputs.size() > 1) {
    load.read_bytes += static_cast<double>(graph.tensor(op.inputs[1]).logical_bytes()) * (groups - 1) / groups;
  }
  // One product (fc, gemm, a matmul of one matrix or of a batch of A's by one B) is dealt to the groups by blocks
  // of its rows or of its columns, whichever reads less: each group reads its share of one operand and the whole of
  // the other.
  const Shape& y = graph.tensor(op.outputs[0]).shape;
  if (!op.bound->split_geometry().window && matrix_family(graph, op) && op.inputs.size() > 1 &&
      (y.rank() < 3 || y.product(0, y.rank() - 2) == 1 || graph.tensor(op.inputs[1]).shape.rank() <= 2)) {
    const double a = static_cast<double>(graph.tensor(op.inputs[0]).logical_bytes());
    const double b = static_cast<double>(graph.tensor(op.inputs[1]).logical_bytes());
    load.read_bytes += std::min(a, b) * (groups - 1) / groups;
  }
  // Every group's share is the same; group 0's is local, the others' remote.
  const CostClass cls = cost_class(graph, op);
  const std::optional<double> kernel = kernel_cycles(*op.bound, cls, arch_);
  const Estimate local = priced(load, cls, kernel);
  if (arch_.core_groups < 2) return local;
  load.remote_bytes = load.read_bytes + load.write_bytes;
  return slower(local, priced(load, cls, kernel));
}

Estimate PlacementCostModel::rows_into_one_store(const Graph& graph, const OpNode& op, const TensorRegion& rows,
                                                 const GroupLoad& load, bool remote) const {
  // Its rows of each plane are a run of their own in the whole output: the store puts runs that short instead of
  // the typical requests the kernel priced for a buffer of its own; where the output lies in another group's memory
  // they cross the link after the rows are computed (a store waits for its block's products), so the link time adds.
  const Shape& y = graph.tensor(op.outputs[0]).shape;
  const double run = static_cast<double>((rows.end - rows.begin) * y[3] * 2);
  Estimate e;
  e.terms.local = std::max(0.0, load.write_bytes * (1 / rate(DmaOp::kPut, run) - 1 / write_bytes_per_cycle_));
  e.terms.remote = remote && remote_bytes_per_cycle_ > 0 ? load.write_bytes / remote_bytes_per_cycle_ : 0;
  e.cycles = e.terms.local + e.terms.remote;
  return e;
}

Estimate PlacementCostModel::split(const Graph& graph, const OpNode& op, const OpSplit& s) const {
  const CostClass cls = cost_class(graph, op);
  Estimate slowest;
  // A kernel that estimates itself is asked about its largest piece (an inner one among equals: halos on both
  // sides), bound as the split executor binds it; a smaller piece is priced by its share of that. Each ask is a
  // blocking search, and pieces a row apart cost alike.
  std::optional<double> largest_kernel;
  std::uint64_t largest_extent = 0;
  if (asks_kernel(cls)) {
    std::size_t largest = 0;
    for (std::size_t b = 0; b < s.blocks.size(); ++b) {
      const std::uint64_t extent = s.blocks[b].second - s.blocks[b].first;
      const bool inner = b > 0 && b + 1 < s.blocks.size();
      if (extent > largest_extent || (extent == largest_extent && inner)) largest = b, largest_extent = extent;
    }
    if (largest_extent > 0) {
      const auto& [begin, end] = s.blocks[largest];
      try {
        std::shared_ptr<const BoundOp> piece;
        if (s.axis.rule == kHeadsRule) {
          piece = attention_batch_piece(*op.bound, begin, end, group_arch_);
          // No mapping of one group's cores takes the piece: a placement the executor could not run.
          if (!piece) return Estimate{std::numeric_limits<double>::infinity(), {}};
        } else if (s.axis.rule != kOneGroupRule) {
          piece = bind_piece(graph, op, s.axis, piece_work(graph, op, s.axis, begin, end, op.attrs));
        }
        largest_kernel = kernel_cycles(piece ? *piece : *op.bound, cls, group_arch_);
      } catch (const ConfigError&) {
        // A piece its kind refuses: the roofline prices the split (the executor, should it be chosen, says why).
      }
    }
  }
  PieceWork w;  // each group's block in turn
  for (std::size_t group = 0; group < s.blocks.size(); ++group) {
    const auto [begin, end] = s.blocks[group];
    if (begin == end) continue;
    piece_regions(graph, op, s.axis, begin, end, w);
    std::optional<double> kernel;
    if (largest_kernel) {
      kernel = *largest_kernel * static_cast<double>(end - begin) / static_cast<double>(largest_extent);
    }
    std::vector<TensorRegion> regions = w.regions;
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      if (w.dropped[k]) regions[k] = TensorRegion{false, 0, 0, 0};
    }
    const double fraction =
        static_cast<double>(end - begin) / static_cast<double>(std::max<std::uint64_t>(1, s.axis.extent));
    GroupLoad load = piece_load(graph, op, regions, fraction);
    // An attention kernel's pieces write their heads' Y into one tensor in group 0's memory.
    if (s.axis.rule == kHeadsRule && group != 0) load.remote_bytes += load.write_bytes;
    Estimate e = priced(load, cls, kernel);
    if (s.whole_output) e += rows_into_one_store(graph, op, w.regions[op.inputs.size()], load, group != 0);
    slowest = slower(slowest, e);
  }
  if (!s.axis.reduces) return slowest;
  // The tree's levels between groups: an add of two partials on the left group, one of them remote.
  std::size_t levels = 0;
  for (const auto& level : s.tree) {
    levels += std::any_of(level.begin(), level.end(), [](const ReductionPair& p) { return p.exchange == "cg"; });
  }
  const double out = static_cast<double>(graph.tensor(op.outputs[0]).logical_bytes());
  // A level's add on the left group reads its own partial, then the remote one over the link (queued behind those
  // reads on the group's engine), then puts the sum: the link's time adds to the local DMA's, as much of it as
  // the preset's fit says is not hidden.
  Estimate level;
  level.terms.launch = launch_cycles_;
  level.terms.local = out / read_bytes_per_cycle_ + out / write_bytes_per_cycle_;
  level.terms.remote = remote_bytes_per_cycle_ > 0 ? out / remote_bytes_per_cycle_ : 0;
  const double link_share = calibration_ ? calibration_->tree_link : 1.0;
  level.cycles = level.terms.launch + level.terms.local + link_share * level.terms.remote;
  for (std::size_t i = 0; i < levels; ++i) slowest += level;
  if (op.attrs.is_object() && op.attrs.contains("activation")) {
    GroupLoad activation;
    activation.flops = out / 2;
    activation.read_bytes = out;
    activation.write_bytes = out;
    slowest += priced(activation, CostClass::kElementwise);
  }
  return slowest;
}

Estimate PlacementCostModel::exchange(const Graph& graph, std::size_t t, const TensorHolding& held,
                                      const std::vector<std::optional<TensorRegion>>& need, bool whole_machine,
                                      bool relayout, const OpNode* reader, std::string_view reader_rule) const {
  const TensorNode& tensor = graph.tensor(t);
  const Shape& shape = tensor.shape;
  double slowest = 0;
  // A whole op reads a whole copy in place, in whichever memory holds it (as --split off reads group 0's).
  const bool whole_copy =
      held.whole || std::any_of(held.groups.begin(), held.groups.end(), [](const auto& h) { return h && h->whole; });
  // A copy read in place costs nothing, unless the consumer wants it in another layout: then it is re-laid out
  // where it is, reading and writing every byte (a gather writes the wanted layout as it goes).
  const double get_cycles_per_byte = 1 / read_bytes_per_cycle_;  // rate() of typical requests, priced at construction
  const double put_cycles_per_byte = 1 / write_bytes_per_cycle_;
  const auto link = [&](double remote_bytes) {
    return remote_bytes_per_cycle_ > 0 ? std::max(0.0, remote_bytes) / remote_bytes_per_cycle_ : 0;
  };
  // Reads, then writes: each waits on the link for its remote bytes.
  const auto in_place = [&](double bytes, double remote_reads, double remote_writes) {
    if (!relayout) return;
    slowest = std::max(slowest, launch_cycles_ + std::max(bytes * get_cycles_per_byte, link(remote_reads)) +
                                    std::max(bytes * put_cycles_per_byte, link(remote_writes)));
  };
  std::optional<double> first_whole_gather;
  for (std::size_t g = 0; g < need.size(); ++g) {
    if (!need[g]) continue;
    const TensorRegion& r = *need[g];
    if (whole_machine && r.whole && whole_copy) {
      // On the whole machine: each group a share, groups other than the copy's reading and writing it remotely.
      const double share = region_bytes(tensor, r) / static_cast<double>(need.size());
      in_place(share, need.size() > 1 ? share : 0, need.size() > 1 ? share : 0);
      continue;
    }
    if (!whole_machine && !relayout && whole_copy && reads_rows_in_place(graph, reader, t, r)) {
      // The piece reads its rows where the whole copy lies: over the link when that is another group's memory,
      // and as runs of its rows of each plane instead of the typical requests its kernel priced.
      const bool own_copy = held.whole ? g == 0 : held.groups[g] && held.groups[g]->whole;
      const double bytes = region_bytes(tensor, r);
      const double run = bytes / static_cast<double>(shape.product(0, r.axis));
      const double shorter = std::max(0.0, bytes * (1 / rate(DmaOp::kGet, run) - get_cycles_per_byte));
      slowest = std::max(slowest, shorter + (own_copy ? 0.0 : link(bytes)));
      continue;
    }
    if (!whole_machine && !relayout && whole_copy &&
        (reads_channels_in_place(graph, reader, reader_rule, t, r) ||
         (r.whole && reads_matrix_in_place(graph, reader)))) {
      // The piece reads its block of planes, or a matrix product's piece its whole operand, where the whole copy
      // lies: over the link when that is another group's memory.
      const bool own_copy = held.whole ? g == 0 : held.groups[g] && held.groups[g]->whole;
      slowest = std::max(slowest, own_copy ? 0.0 : link(region_bytes(tensor, r)));
      continue;
    }
    double local = 0;
    if (held.whole) {
      if (g == 0 && r.whole) {  // the copy itself
        in_place(region_bytes(tensor, r), 0, 0);
        continue;
      }
      local = g == 0 ? region_bytes(tensor, r) : 0;
    } else {
      if (held.groups[g] && same_region(*held.groups[g], r)) {
        in_place(region_bytes(tensor, r), 0, 0);
        continue;
      }
      if (held.groups[g]) local = overlap_bytes(tensor, r, *held.groups[g]);
    }
    if (!whole_machine && !held.whole && held.groups[g] && margin_rows(graph, t, *held.groups[g], r)) {
      // The producer wrote its rows into the consumer's buffer (SplitPlacement's margin rows): a gather per margin
      // moves only the halo rows, a block of them per plane.
      const TensorRegion& own = *held.groups[g];
      const double halo = region_bytes(tensor, r) - local;
      const double margins = (r.begin < own.begin ? 1.0 : 0.0) + (own.end < r.end ? 1.0 : 0.0);
      const double block = halo / margins / static_cast<double>(shape.product(0, r.axis));
      const double read = halo / rate(DmaOp::kGet, block), written = halo / rate(DmaOp::kPut, block);
      slowest = std::max(slowest, margins * launch_cycles_ + std::max(read, link(halo)) + written);
      continue;
    }
    // The gather reads boxes: one contiguous block per index before the cut axis, of the rows the smaller of the
    // needed and the held region spans (small blocks cost whole transactions and a request each). It writes the
    // needed region tile by tile, so its puts are as long as that region's own blocks.
    const double bytes = region_bytes(tensor, r);
    double block = bytes;
    const auto narrow = [&](const TensorRegion& cut) {
      if (!cut.whole)
        block = std::min(block, region_bytes(tensor, cut) / static_cast<double>(shape.product(0, cut.axis)));
    };
    narrow(r);
    const double written_block = block;
    if (!held.whole && held.groups[g]) narrow(*held.groups[g]);
    if (!held.whole) {
      for (const auto& h : held.groups) {
        if (h) narrow(*h);
      }
    }
    // A core reads a tile's runs, then writes the tile: the reads wait on the link where they are remote, the
    // writes on the engine after them.
    const double read_cycles = bytes / rate(DmaOp::kGet, block),
                 written_cycles = bytes / rate(DmaOp::kPut, written_block);
    if (!whole_machine) {
      const double gather = launch_cycles_ + std::max(read_cycles, link(bytes - local)) + written_cycles;
      if (r.whole && !held.whole) {
        // The whole tensor from pieces: the first group that needs it gathers a copy into its memory, and the
        // others read that copy in place, over their links, once it is there (SplitPlacement::obtain).
        if (!first_whole_gather) {
          first_whole_gather = gather;
          slowest = std::max(slowest, gather);
        } else {
          slowest = std::max(slowest, *first_whole_gather + link(bytes));
        }
        continue;
      }
      slowest = std::max(slowest, gather);
      continue;
    }
    // A whole op's input is gathered into group 0's memory by every group, a share each: a group reads what its
    // share holds in other memories and writes it into group 0's.
    const double groups = static_cast<double>(need.size());
    for (std::size_t h = 0; h < need.size(); ++h) {
      const double own =
          held.whole ? (h == 0 ? bytes : 0) : (held.groups[h] ? overlap_bytes(tensor, r, *held.groups[h]) : 0);
      const double share = bytes / groups;
      const double remote_reads = share * (1 - own / std::max(1.0, bytes)), remote_writes = h == 0 ? 0 : share;
      slowest = std::max(slowest, launch_cycles_ + std::max(read_cycles / groups, link(remote_reads)) +
                                      std::max(written_cycles / groups, link(remote_writes)));
    }
  }
  Estimate e;
  e.terms.exchange = slowest;
  e.cycles = slowest * (calibration_ ? calibration_->exchange : 1.0);
  return e;
}

}  // namespace ldmsim
