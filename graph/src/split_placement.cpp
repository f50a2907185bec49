// The split placement (placement.hpp, docs/splitting.md): runs each split op as one sub-op per core
// group on that group's block of pieces (a group view), with the pieces in that group's memory. A tensor may be
// held as several copies (pieces, replicas, a whole copy); a consumer that needs a part that no copy in its own
// memory holds gets it by one gather_parts kernel on its own group (the exchange, reading other memories), and
// starts no earlier than the copies it reads were ready. Partial results of a split inner dimension are summed by
// a pairwise tree of adds across the groups.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "constant_replicas.hpp"
#include "ldmsim/graph/tags.hpp"
#include "ldmsim/kernels/attention_kernel.hpp"
#include "ldmsim/kernels/fused_kernel.hpp"
#include "ldmsim/kernels/gather_parts.hpp"
#include "ldmsim/kernels/relayout.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/host_pages.hpp"
#include "placement.hpp"
#include "read_as_it_lies.hpp"

namespace ldmsim::executor_detail {

namespace {

using nlohmann::json;

/// `layout` (a view of a 4-D tensor's region in C order, without padding) with planes of `plane` elements (the
/// view level whose elements below it are one plane) `pitch` apart, the levels above it stepping by as many of
/// those as they hold; nullopt when the view cuts a plane.
std::optional<Layout> plane_pitched(Layout layout, std::uint64_t plane, std::uint64_t pitch) {
  const Shape4& s = layout.shape;
  if (!layout.is_natural() || plane == 0 || s.elements() % plane != 0) return std::nullopt;
  if (s.w == plane) {
    layout.w_pitch = pitch, layout.hw_pitch = s.h * pitch, layout.chw_pitch = s.c * layout.hw_pitch;
  } else if (s.hw() == plane) {
    layout.hw_pitch = pitch, layout.chw_pitch = s.c * pitch;
  } else if (s.chw() == plane) {
    layout.chw_pitch = pitch;
  } else {
    return std::nullopt;
  }
  layout.total = s.n * layout.chw_pitch;
  return layout;
}

/// A margin buffer's planes (docs/splitting.md, "Margin rows"): each plane holds the consumer's rows of one (n, c),
/// `pitch` elements apart, a whole number of DMA transactions, with `lead` elements before its first row so that the
/// producer's rows (`top` rows of `columns` into the plane) start on a transaction.
struct MarginPlanes {
  std::uint64_t columns = 0, rows = 0, top = 0, pitch = 0, lead = 0;
  /// Elements from the buffer's start to row `r` of the consumer's region in plane 0.
  std::uint64_t row_at(std::uint64_t r) const { return lead + r * columns; }
};

MarginPlanes margin_planes(const Shape& whole, const TensorRegion& region, std::uint64_t held_begin,
                           std::uint64_t transaction) {
  MarginPlanes m;
  m.columns = whole[3];
  m.rows = region.end - region.begin;
  m.top = held_begin - region.begin;
  m.lead = (transaction - m.top * m.columns % transaction) % transaction;
  m.pitch = (m.lead + m.rows * m.columns + transaction - 1) / transaction * transaction;
  return m;
}

/// The box of rows [begin, end) of a margin buffer's region (planes `m`, starting at `base`), as `plan` views the
/// box's shape; nullopt when that view cuts a plane. Its extent, as a layout of its own would have it, ends within
/// a plane past the buffer's planes: the buffer is allocated with a plane of room.
std::optional<DeviceTensor> row_box(const DeviceTensor& base, const MarginPlanes& m, const TensorRegion& region,
                                    std::uint64_t begin, std::uint64_t end, const PaddingPlan& plan) {
  const std::optional<Layout> l = plane_pitched(plan.layout, (end - begin) * m.columns, m.pitch);
  if (!l) return std::nullopt;
  DeviceTensor box = base;
  box.plan = plan;
  box.plan.layout = *l;
  box.owns_padding = false;
  box.ptr = base.ptr + m.row_at(begin - region.begin);
  return box;
}

/// True when every element of `box` lies on a 4-byte word exactly where `own` puts it (pitches of the same parity,
/// an even start) and own's rows are whole words: a kernel's DMA legal on its own layout stays legal on the box.
bool same_word_parity(const DeviceTensor& box, const Layout& own) {
  const Layout& b = box.layout();
  return box.ptr.addr() % 4 == 0 && b.w_pitch % 2 == own.w_pitch % 2 && b.hw_pitch % 2 == own.hw_pitch % 2 &&
         b.chw_pitch % 2 == own.chw_pitch % 2 && own.chw_pitch % 2 == 0;
}

/// Rows `r` of `whole` (a copy of a 4-D tensor of shape `shape` whose logical elements lie in C order) as a box in
/// the view `want` at the copy's plane pitch; nullopt when that view cuts a plane or the box's words would lie
/// otherwise than `want`'s own layout has them. A box read (`read_only`) ends where the copy does; a box written
/// keeps its layout's extent (whole planes: a writer's store counts them), which the copy has room for.
std::optional<DeviceTensor> row_box_of(const DeviceTensor& whole, const Shape& shape, const TensorRegion& r,
                                       const PaddingPlan& want, bool read_only) {
  if (!whole.layout().only_tail_padded()) return std::nullopt;
  const std::uint64_t columns = shape[3];
  std::optional<Layout> l = plane_pitched(want.layout, (r.end - r.begin) * columns, shape[2] * columns);
  if (!l) return std::nullopt;
  if (read_only) {  // its last plane's rows end before that plane does
    l->total = std::min(l->total, whole.layout().total - r.begin * columns);
  } else if (r.begin * columns + l->total > whole.layout().total) {
    return std::nullopt;
  }
  DeviceTensor box = whole;
  box.plan = want;
  box.plan.layout = *l;
  box.owns_padding = false;
  box.ptr = whole.ptr + r.begin * columns;
  if (!same_word_parity(box, want.layout)) return std::nullopt;
  return box;
}

/// Channels `r` of `whole` (a copy of a 4-D tensor of one sample, shape `shape`) as the block of their planes, in the
/// view `want`; nullopt unless both the copy and `want` hold their elements densely in C order (padding at the tail
/// only, in whatever view each plan takes of its shape): the block then starts at its first element's logical index.
/// The block ends where the copy does.
std::optional<DeviceTensor> channel_box_of(const DeviceTensor& whole, const Shape& shape, const TensorRegion& r,
                                           const PaddingPlan& want) {
  const Layout& from = whole.layout();
  if (!from.only_tail_padded() || !want.layout.only_tail_padded()) return std::nullopt;
  const std::uint64_t begin = r.begin * shape.product(2, shape.rank());
  if (begin >= from.total) return std::nullopt;
  DeviceTensor box = whole;
  box.plan = want;
  box.plan.layout.total = std::min<std::uint64_t>(want.layout.total, from.total - begin);
  box.owns_padding = false;
  box.ptr = whole.ptr + begin;
  if (!same_word_parity(box, want.layout)) return std::nullopt;
  return box;
}

/// One device copy of (a part of) a tensor.
struct Copy {
  DeviceTensor tensor;
  int group = 0;          ///< whose memory holds it
  TensorRegion region;    ///< of the logical tensor
  Cycle ready = 0;        ///< when the work that wrote it ended
  bool gathered = false;  ///< put together by a gather (for one consumer) rather than written by the producer
  /// Written by work on every group (a whole op, a whole-machine re-layout or gather). Another such step goes on
  /// on each group at that group's own clock, as the whole-machine placement runs consecutive ops; work on one
  /// group waits for `ready`.
  bool per_group = false;
  /// A box of another copy's buffer (a producer's rows inside its consumer's margin buffer): never released alone.
  bool borrowed = false;
  /// Set while only these rows of `region` are written (a margin buffer waiting for its halo rows): no reader
  /// takes the copy until obtain fills the rest.
  std::optional<TensorRegion> filled;
  /// The allocation to release when it is not `tensor` itself (a margin buffer's planes start past a lead).
  std::optional<DeviceTensor> allocation;
  std::optional<MarginPlanes> margins;  ///< a margin buffer's planes
  /// A box of a whole copy in its reader's own view at the copy's pitches (rows read in place): read as it is.
  bool pitched = false;
};

/// The cycle a step must wait for before it reads `c`: none for whole-machine work reading a copy whole-machine
/// work wrote (each group already holds its own end of that work), else the end of the work that wrote it.
Cycle wait_for(const Copy& c, bool whole_machine) {
  return whole_machine && c.per_group ? 0 : c.ready;
}

/// One group's share of a split op: its pieces' work, bound as one sub-op.
struct GroupPiece {
  PieceWork work;
  std::shared_ptr<const BoundOp> bound;
};

/// The logical elements of `r` of a C-order tensor.
std::vector<f16> host_slice(std::span<const f16> values, const Shape& shape, const TensorRegion& r) {
  if (r.whole) return {values.begin(), values.end()};
  const std::uint64_t inner = shape.product(r.axis + 1, shape.rank()), outer = shape.product(0, r.axis);
  std::vector<f16> out;
  out.reserve(outer * (r.end - r.begin) * inner);
  for (std::uint64_t o = 0; o < outer; ++o) {
    const auto from = values.begin() + static_cast<std::ptrdiff_t>((o * shape[r.axis] + r.begin) * inner);
    out.insert(out.end(), from, from + static_cast<std::ptrdiff_t>((r.end - r.begin) * inner));
  }
  return out;
}

/// host_slice as shared values: the whole tensor or a slice of consecutive elements (a cut of the outermost
/// non-unit axis) shares the tensor's own storage, so staging can lend it to device memory instead of copying.
SharedHalves shared_slice(const SharedHalves& values, const Shape& shape, const TensorRegion& r) {
  if (r.whole) return values;
  if (shape.product(0, r.axis) == 1) {
    const std::uint64_t inner = shape.product(r.axis + 1, shape.rank());
    return SharedHalves(values.shared(), values.data() + r.begin * inner, (r.end - r.begin) * inner);
  }
  return SharedHalves(host_slice(values.span(), shape, r));
}

/// shared_slice of each region; the slices that must be copies (cuts of an inner axis) share one fresh buffer in
/// huge pages where granted (a split weight's columns: each group's slice otherwise faults its pages in one by one).
std::vector<SharedHalves> shared_slices(const SharedHalves& values, const Shape& shape,
                                        const std::vector<TensorRegion>& regions) {
  const auto copied = [&](const TensorRegion& r) { return !r.whole && shape.product(0, r.axis) != 1; };
  std::uint64_t total = 0;
  for (const TensorRegion& r : regions) {
    if (copied(r)) total += region_shape(shape, r).elements();
  }
  std::shared_ptr<std::byte> buffer = total > 0 ? fresh_huge_buffer(total * sizeof(f16)) : nullptr;
  f16* at = reinterpret_cast<f16*>(buffer.get());
  std::vector<SharedHalves> out;
  for (const TensorRegion& r : regions) {
    if (!copied(r)) {
      out.push_back(shared_slice(values, shape, r));
      continue;
    }
    const std::uint64_t inner = shape.product(r.axis + 1, shape.rank()), outer = shape.product(0, r.axis);
    const std::uint64_t run = (r.end - r.begin) * inner;
    for (std::uint64_t o = 0; o < outer; ++o) {
      const f16* from = values.data() + (o * shape[r.axis] + r.begin) * inner;
      std::copy(from, from + run, at + o * run);
    }
    out.emplace_back(buffer, at, outer * run);
    at += outer * run;
  }
  return out;
}

class SplitPlacement final : public Placement {
 public:
  SplitPlacement(RunState& state, SplitPlan split)
      : s_(state),
        graph_(state.graph),
        plan_(state.plan),
        machine_(state.machine),
        split_(std::move(split)),
        registry_(graph_.registry()),
        held_(graph_.tensors().size()),
        replicas_(state) {
    for (std::uint32_t g = 0; g < machine_.arch().core_groups; ++g)
      views_.push_back(machine_.group_view({static_cast<int>(g)}));
  }

  void stage(const Step& step) override;
  void relayout(const Step&) override {}  // consumers re-lay out what they read (obtain)
  void hand_over(const Step& step) override;
  void free(const Step& step) override { free_all(step.tensor); }
  void run(const OpNode& op) override {
    if (const auto& s = split_.ops[op.index]) {
      run_split(op, *s);
    } else {
      run_whole(op);
    }
  }
  std::vector<f16> download(std::size_t t) override;
  void summarize(RunSummary& summary) const override {
    summary.split = SplitRunRecord{split_.options.cost_aware ? "auto" : "on",
                                   std::string(to_string(split_.options.rounding)),
                                   split_.options.pack_constants,
                                   static_cast<std::size_t>(std::count_if(split_.ops.begin(), split_.ops.end(),
                                                                          [](const auto& s) { return s.has_value(); })),
                                   split_.estimated_cycles,
                                   replicas_.constants(),
                                   replicas_.bytes(),
                                   split_.options.pinned};
  }

 private:
  Machine& view(int g) { return *views_[static_cast<std::size_t>(g)]; }
  std::vector<int> all_groups() const {
    std::vector<int> out(views_.size());
    for (std::size_t g = 0; g < out.size(); ++g) out[g] = static_cast<int>(g);
    return out;
  }
  PaddingPlan wanted(const BoundOp& op, std::size_t k) const { return tensor_plan(op, k, plan_.policy); }
  PaddingPlan natural(const Shape& shape, DType type = DType::kF16) const {
    return typed_plan(shape, type, choose_plan(Shape4::view_of(shape), PaddingSpec{PaddingClass::kOneD}, plan_.policy));
  }
  const GroupPiece& piece(const OpNode& op, int g);
  DeviceTensor allocate(Machine& on, const std::string& name, const PaddingPlan& p) { return s_.allocate(on, name, p); }
  void release(const DeviceTensor& t) { s_.release(t); }
  /// Runs a helper op (the reduction tree's add) on group g after `ready`; the group's clock after it.
  Cycle run_helper(int g, Cycle ready, const BoundOp& op, std::span<const DeviceTensor> in,
                   std::span<const DeviceTensor> out, const std::string& label) {
    machine_.start_no_earlier({g}, ready);
    op.run(view(g), in, out, label);
    return machine_.group_clock(g);
  }
  /// A copy of region `r` of tensor `t` in group g's memory (whole: anywhere) laid out as `want`, re-laid out or
  /// gathered on group g, or on the whole machine into group 0's memory for a whole op (`whole_machine`), as the
  /// whole-machine placement re-lays out.
  /// `in_place`: the region may be read as a box of a whole copy where that copy lies (rows_in_place,
  /// channels_in_place).
  const Copy& obtain(std::size_t t, const TensorRegion& r, int g, const PaddingPlan& want, bool whole_machine = false,
                     bool in_place = false);
  /// Rows `r` of a whole copy of tensor `t` (one in g's memory first) as a box of it, in the reader's view `want` at
  /// the copy's plane pitch (rows_in_place); channels `r` as the block of its planes (channels_in_place); nullopt
  /// when there is no such copy or the layouts do not allow it.
  std::optional<Copy> box_view(std::size_t t, const TensorRegion& r, int g, const PaddingPlan& want) const;
  /// True when every piece of `s` (rows_into_one) can write its rows as a box of one natural output allocated on a
  /// transaction.
  bool rows_fit_one_output(const OpNode& op, const OpSplit& s);
  /// The natural layout of 4-D `y` with a plane of room after it: its pieces' boxes keep whole planes.
  PaddingPlan one_output(const TensorNode& y) const {
    PaddingPlan p = natural(y.shape, y.dtype);
    p.layout.total += y.shape[2] * y.shape[3];
    return p;
  }
  /// Runs a re-layout or gather on group g, or on every group (`whole_machine`), after `ready`; its end.
  template <typename Work>
  Cycle run_on(int g, bool whole_machine, Cycle ready, Work work) {
    machine_.start_no_earlier(whole_machine ? all_groups() : std::vector<int>{g}, ready);
    work(whole_machine ? machine_ : view(g));
    return whole_machine ? machine_.stats().cycles : machine_.group_clock(g);
  }
  /// The reduced output of a reduction split with the op's "activation" applied (pieces leave it out: a partial
  /// sum must not be activated); `sum` itself when the op has none.
  Copy activate_sum(const OpNode& op, Copy sum);
  const Copy* find_copy(std::size_t t, const TensorRegion& r, int g, const PaddingPlan* want) const;
  Copy assemble(std::size_t t, const TensorRegion& r, int g, const PaddingPlan& want, bool whole_machine);
  /// Gathers region `r` of tensor `t` into `out` on group g (or the whole machine); the gather's end.
  Cycle gather_into(std::size_t t, const TensorRegion& r, int g, const DeviceTensor& out, bool whole_machine);
  /// The consumer's buffer a producer's piece `held` of output `t` on group g is written into, with room for the
  /// consumer's halo rows (margin_rows), and the piece's box of it; nullopt where the piece gets a buffer of its own.
  struct MarginBuffer {
    DeviceTensor allocation, buffer, piece;
    TensorRegion region;
    MarginPlanes planes;
  };
  std::optional<MarginBuffer> margin_buffer(std::size_t t, const TensorRegion& held, int g, const PaddingPlan& own);
  /// Gathers the halo rows of a margin buffer (around the rows its producer wrote); the copy is then complete.
  void fill_margins(std::size_t t, Copy& c);
  const Copy& keep(std::size_t t, Copy c) { return held_[t].emplace_back(std::move(c)); }
  void run_split(const OpNode& op, const OpSplit& s);
  /// An op's constant packs over its groups: staged buffers, held until every group ran (groups overlap in
  /// simulated time), and their totals for stats.json.
  struct PackTotals {
    std::uint64_t cores = 0, bytes = 0, max_bytes = 0;
    std::vector<DeviceAddr> buffers;
  };
  /// Runs group g's sub-op, with one pack of its constants per core when its kernel takes them (their bytes are
  /// counted in `totals`, for the caller's footprint). Runs as group g's control core (Machine::run_group_controls):
  /// it touches only what g's view and `totals` hold.
  void run_piece(const OpNode& op, const GroupPiece& p, int g, std::span<const DeviceTensor> in,
                 std::span<const DeviceTensor> out, PackTotals& totals);
  void run_whole(const OpNode& op);
  void free_all(std::size_t t);

  RunState& s_;
  const Graph& graph_;
  const ExecutionPlan& plan_;
  Machine& machine_;
  SplitPlan split_;
  const OperatorRegistry& registry_;  ///< the graph's: binds pieces, the reduction tree's adds, activations
  std::vector<std::unique_ptr<Machine>> views_;
  std::vector<std::vector<Copy>> held_;
  std::map<std::pair<std::size_t, int>, GroupPiece> pieces_;
  ConstantReplicas replicas_;  ///< a whole op's constants, held in every group's memory
};

const GroupPiece& SplitPlacement::piece(const OpNode& op, int g) {
  const auto key = std::make_pair(op.index, g);
  if (const auto it = pieces_.find(key); it != pieces_.end()) return it->second;
  const OpSplit& s = *split_.ops[op.index];
  const auto [begin, end] = s.blocks[static_cast<std::size_t>(g)];
  GroupPiece p;
  p.work = piece_work(graph_, op, s.axis, begin, end, op.attrs);
  for (std::size_t k = 0; k < p.work.regions.size(); ++k) {  // a range over the whole axis is the whole tensor
    TensorRegion& r = p.work.regions[k];
    const std::size_t t = k < op.inputs.size() ? op.inputs[k] : op.outputs[k - op.inputs.size()];
    if (!r.whole && r.begin == 0 && r.end == graph_.tensor(t).shape[r.axis]) r = TensorRegion{};
  }
  if (s.axis.rule == kOneGroupRule) {  // the whole op on one group: bound as it is
    p.bound = op.bound;
    return pieces_.emplace(key, std::move(p)).first->second;
  }
  if (s.axis.rule == kHeadsRule) {  // an attention kernel's batches
    p.bound = attention_batch_piece(*op.bound, begin, end, view(g).arch());
    if (!p.bound) {
      throw ConfigError(
          fmt::format("{} (heads): its batches [{}, {}) for core group {} fit no mapping of one group's "
                      "cores; hint: --split off runs it whole",
                      op.label(), begin, end, g));
    }
    return pieces_.emplace(key, std::move(p)).first->second;
  }
  if (const FusedProgram* program = fused_program(*op.bound)) {  // a fused kernel's rows: the program, cut
    const std::size_t frame_axis = s.axis.axis + program->frame.shape.rank() -
                                   graph_.tensor(op.outputs[s.axis.operand - op.inputs.size()]).shape.rank();
    p.bound = fused_rows(*op.bound, frame_axis, begin, end, view(g).arch());
    if (!p.bound) {
      throw ConfigError(
          fmt::format("{} ({}): its rows [{}, {}) for core group {} fit no mapping of one group's "
                      "cores; hint: --split off runs it whole",
                      op.label(), s.axis.rule, begin, end, g));
    }
    return pieces_.emplace(key, std::move(p)).first->second;
  }
  try {
    p.bound = bind_piece(graph_, op, s.axis, p.work);
  } catch (const ConfigError& e) {  // the split rule should never cut such a piece: say where it came from
    throw ConfigError(
        fmt::format("{} ({}): its piece for core group {} cannot run ({}); hint: --split off runs it whole", op.label(),
                    s.axis.rule, g, e.what()));
  }
  return pieces_.emplace(key, std::move(p)).first->second;
}

const Copy* SplitPlacement::find_copy(std::size_t t, const TensorRegion& r, int g, const PaddingPlan* want) const {
  const Copy* best = nullptr;
  for (const Copy& c : held_[t]) {
    // A box of a whole copy was made for the reader that asked for it (rows read in place): another reader
    // re-laying it out would read it at its pitches, often remotely, where a gather of the rows costs less.
    if (c.filled || c.pitched || !same_region(c.region, r)) continue;
    if (want != nullptr && !c.tensor.layout().same_placement(want->layout)) continue;
    if (c.group == g) return &c;
    if (best == nullptr) best = &c;
  }
  return best;
}

Copy SplitPlacement::assemble(std::size_t t, const TensorRegion& r, int g, const PaddingPlan& want,
                              bool whole_machine) {
  const DeviceTensor out = allocate(view(g), graph_.tensor(t).name, want);
  return Copy{out, g, r, gather_into(t, r, g, out, whole_machine), true, whole_machine};
}

Cycle SplitPlacement::gather_into(std::size_t t, const TensorRegion& r, int g, const DeviceTensor& out,
                                  bool whole_machine) {
  const TensorNode& node = graph_.tensor(t);
  const Shape out_shape = region_shape(node.shape, r);
  // The sources: a whole copy (one in g's memory first), else the pieces along the producer's axis, walked from
  // the start taking at each index the copy that reaches furthest (one in g's memory among equals).
  const Copy* whole = find_copy(t, TensorRegion{}, g, nullptr);
  const std::size_t axis = whole != nullptr ? (r.whole ? 0 : r.axis) : held_[t].front().region.axis;
  const bool restricted = !r.whole && r.axis == axis;
  const std::uint64_t first = restricted ? r.begin : 0, last = restricted ? r.end : node.shape[axis];
  std::vector<GatherPart> parts;
  Cycle ready = 0;
  for (std::uint64_t at = first; at < last;) {
    const Copy* best = whole;
    // The producer's pieces first: a copy another group gathered is ready only after that gather, so reading it
    // would chain the groups' gathers one after another.
    for (const bool allow_gathered : {false, true}) {
      if (best != nullptr) break;
      for (const Copy& c : held_[t]) {
        if (c.filled || c.region.whole || c.region.axis != axis || c.region.begin > at || c.region.end <= at) continue;
        if (c.gathered && !allow_gathered) continue;
        if (best == nullptr || c.region.end > best->region.end || (c.region.end == best->region.end && c.group == g))
          best = &c;
      }
    }
    if (best == nullptr) {
      throw std::logic_error(
          fmt::format("split executor: no copy of '{}' holds index {} of axis {}", node.name, at, axis));
    }
    const std::uint64_t offset = best->region.whole ? 0 : best->region.begin;
    const std::uint64_t end = best->region.whole ? last : std::min(last, best->region.end);
    GatherPart part{best->tensor, region_shape(node.shape, best->region),
                    std::vector<std::uint64_t>(node.shape.rank(), 0), end - at};
    part.begin[axis] = at - offset;
    if (!r.whole && r.axis != axis) part.begin[r.axis] = r.begin;  // a box: the consumer's range of another axis
    parts.push_back(std::move(part));
    ready = std::max(ready, wait_for(*best, whole_machine));
    at = end;
  }
  const std::string label =
      whole_machine ? fmt::format("gather:{}", node.name) : fmt::format("gather:{}@cg{}", node.name, g);
  return run_on(g, whole_machine, ready, [&](Machine& on) { gather_parts(on, out_shape, axis, parts, out, label); });
}

std::optional<SplitPlacement::MarginBuffer> SplitPlacement::margin_buffer(std::size_t t, const TensorRegion& held,
                                                                          int g, const PaddingPlan& own) {
  const TensorNode& node = graph_.tensor(t);
  if (node.consumers.size() != 1) return std::nullopt;
  const OpNode& consumer = graph_.ops()[node.consumers.front()];
  const auto& cut = split_.ops[consumer.index];
  const auto gi = static_cast<std::size_t>(g);
  if (!cut || cut->blocks[gi].first == cut->blocks[gi].second) return std::nullopt;
  const GroupPiece& p = piece(consumer, g);
  const auto k =
      static_cast<std::size_t>(std::find(consumer.inputs.begin(), consumer.inputs.end(), t) - consumer.inputs.begin());
  if (p.work.dropped[k] || !margin_rows(graph_, t, held, p.work.regions[k])) return std::nullopt;
  const std::size_t at = static_cast<std::size_t>(
      std::count(p.work.dropped.begin(), p.work.dropped.begin() + static_cast<std::ptrdiff_t>(k), false));
  const PaddingPlan want = wanted(*p.bound, at);
  const TensorRegion& region = p.work.regions[k];
  // The consumer's buffer: its rows of every (n, c) in a plane of whole transactions, the producer's rows starting
  // on one; the piece a box of it in the producer's own view of its shape.
  const MarginPlanes m = margin_planes(node.shape, region, held.begin, machine_.arch().dma.transaction_bytes / 2);
  const std::optional<Layout> planes = plane_pitched(want.layout, m.rows * m.columns, m.pitch);
  if (!planes) return std::nullopt;
  PaddingPlan allocated = want;  // the lead, the planes and a plane of room for the boxes' extents
  allocated.layout = *planes;
  allocated.layout.total += m.lead + m.pitch;
  MarginBuffer b;
  b.allocation = allocate(view(g), node.name, allocated);
  b.buffer = b.allocation;
  b.buffer.ptr = b.allocation.ptr + m.lead;
  b.buffer.plan.layout = *planes;
  const std::optional<DeviceTensor> box = row_box(b.allocation, m, region, held.begin, held.end, own);
  if (!box || !same_word_parity(*box, own.layout)) {
    release(b.allocation);
    return std::nullopt;
  }
  b.piece = *box;
  b.region = region;
  b.planes = m;
  return b;
}

void SplitPlacement::fill_margins(std::size_t t, Copy& c) {
  const TensorRegion written = *c.filled;
  const Shape& shape = graph_.tensor(t).shape;
  Cycle ready = c.ready;
  for (const auto& [begin, end] :
       {std::make_pair(c.region.begin, written.begin), std::make_pair(written.end, c.region.end)}) {
    if (begin == end) continue;
    const TensorRegion rows{false, c.region.axis, begin, end};
    const auto box = row_box(*c.allocation, *c.margins, c.region, begin, end, natural(region_shape(shape, rows)));
    if (!box) throw std::logic_error(fmt::format("split executor: no box of rows of '{}'", graph_.tensor(t).name));
    ready = std::max(ready, gather_into(t, rows, c.group, *box, false));
  }
  c.filled.reset();
  c.ready = ready;
  c.gathered = true;
}

bool SplitPlacement::rows_fit_one_output(const OpNode& op, const OpSplit& s) {
  const TensorNode& y = graph_.tensor(op.outputs[0]);
  const DeviceTensor whole{y.name, DevicePtr<f16>(DeviceAddr{0}), one_output(y)};
  for (std::size_t gi = 0; gi < views_.size(); ++gi) {
    if (s.blocks[gi].first == s.blocks[gi].second) continue;
    const GroupPiece& p = piece(op, static_cast<int>(gi));
    const auto kept = static_cast<std::size_t>(std::count(p.work.dropped.begin(), p.work.dropped.end(), false));
    if (!row_box_of(whole, y.shape, p.work.regions[op.inputs.size()], wanted(*p.bound, kept), false)) return false;
  }
  return true;
}

std::optional<Copy> SplitPlacement::box_view(std::size_t t, const TensorRegion& r, int g,
                                             const PaddingPlan& want) const {
  const Copy* whole = find_copy(t, TensorRegion{}, g, nullptr);
  if (whole == nullptr) return std::nullopt;
  constexpr std::size_t kChannels = 1;
  const std::optional<DeviceTensor> box = r.axis == kChannels
                                              ? channel_box_of(whole->tensor, graph_.tensor(t).shape, r, want)
                                              : row_box_of(whole->tensor, graph_.tensor(t).shape, r, want, true);
  if (!box) return std::nullopt;
  Copy c{*box, whole->group, r, whole->ready, false, whole->per_group, true};
  c.pitched = true;
  return c;
}

const Copy& SplitPlacement::obtain(std::size_t t, const TensorRegion& r, int g, const PaddingPlan& want,
                                   bool whole_machine, bool in_place) {
  const TensorNode& node = graph_.tensor(t);
  // A copy of exactly this part in the wanted placement: in g's memory if there is one, else read in place.
  if (const Copy* c = find_copy(t, r, g, &want); c != nullptr && (c->group == g || r.whole)) return *c;
  // The consumer's margin buffer on g, its producer's rows written: the halo rows go into its margins.
  for (Copy& c : held_[t]) {
    if (c.filled && c.group == g && !whole_machine && same_region(c.region, r)) {
      fill_margins(t, c);
      return c;
    }
  }
  // Rows or channels of a whole copy, read where it lies (remotely where that is another group's memory).
  if (in_place && !whole_machine) {
    if (std::optional<Copy> box = box_view(t, r, g, want)) return keep(t, std::move(*box));
  }
  // The same part in another placement: re-laid out on g.
  if (const Copy* c = find_copy(t, r, g, nullptr); c != nullptr) {
    DeviceTensor to = allocate(view(g), node.name, want);
    const std::string label =
        whole_machine ? fmt::format("relayout:{}", node.name) : fmt::format("relayout:{}@cg{}", node.name, g);
    const Cycle end = run_on(g, whole_machine, wait_for(*c, whole_machine),
                             [&](Machine& on) { ldmsim::relayout(on, c->tensor, to, label); });
    return keep(t, Copy{to, g, r, end, false, whole_machine});
  }
  // Cut from a whole copy, or put together from pieces (with a box of another axis when the consumer's differs).
  return keep(t, assemble(t, r, g, want, whole_machine));
}

void SplitPlacement::stage(const Step& step) {
  const TensorNode& node = graph_.tensor(step.tensor);
  const SharedHalves initial = initial_values(node);
  // The first consumer decides the placement: its groups' regions, or whole in group 0's memory.
  const auto first = std::find_if(plan_.steps.begin(), plan_.steps.end(), [&](const Step& s) {
    if (s.kind != Step::Kind::kRun && s.kind != Step::Kind::kHandOver) return false;
    const auto& in = graph_.ops()[s.op].inputs;
    return std::find(in.begin(), in.end(), step.tensor) != in.end();
  });
  const OpNode* op = first == plan_.steps.end() ? nullptr : &graph_.ops()[first->op];
  if (op != nullptr && first->kind == Step::Kind::kRun && split_.ops[op->index]) {
    const std::size_t k =
        static_cast<std::size_t>(std::find(op->inputs.begin(), op->inputs.end(), step.tensor) - op->inputs.begin());
    std::vector<int> groups;  // the groups whose pieces read it, and their regions
    std::vector<TensorRegion> regions;
    for (std::size_t g = 0; g < views_.size(); ++g) {
      const auto [begin, end] = split_.ops[op->index]->blocks[g];
      if (begin == end || piece(*op, static_cast<int>(g)).work.dropped[k]) continue;
      groups.push_back(static_cast<int>(g));
      regions.push_back(piece(*op, static_cast<int>(g)).work.regions[k]);
    }
    const std::vector<SharedHalves> slices = shared_slices(initial, node.shape, regions);
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const GroupPiece& p = piece(*op, groups[i]);
      const std::size_t at = static_cast<std::size_t>(
          std::count(p.work.dropped.begin(), p.work.dropped.begin() + static_cast<std::ptrdiff_t>(k), false));
      const DeviceTensor t = s_.stage(view(groups[i]), node.name, wanted(*p.bound, at), slices[i]);
      held_[step.tensor].push_back(Copy{t, groups[i], regions[i], 0});
    }
  }
  auto& copies = held_[step.tensor];
  if (copies.empty()) {
    const DeviceTensor t = s_.stage(machine_, node.name, step.plan, initial);
    copies.push_back(Copy{t, 0, TensorRegion{}, 0});
    if (op != nullptr && first->kind == Step::Kind::kRun && is_constant_tensor(graph_, step.tensor)) {
      for (const ReplicaCopy& c : replicas_.replicate(t)) copies.push_back(Copy{c.tensor, c.group, TensorRegion{}, 0});
    }
  } else if (!copies.front().region.whole) {
    // Rows the first consumer skips (a strided conv's) may be read by others: staged too, in group 0's memory.
    const std::size_t axis = copies.front().region.axis;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> held;
    for (const Copy& c : copies) held.emplace_back(c.region.begin, c.region.end);
    std::sort(held.begin(), held.end());
    std::uint64_t at = 0;
    std::vector<TensorRegion> gaps;
    for (const auto& [begin, end] : held) {
      if (begin > at) gaps.push_back({false, axis, at, begin});
      at = std::max(at, end);
    }
    if (at < node.shape[axis]) gaps.push_back({false, axis, at, node.shape[axis]});
    for (const TensorRegion& gap : gaps) {
      const Shape shape = region_shape(node.shape, gap);
      const DeviceTensor t = s_.stage(view(0), node.name, natural(shape), shared_slice(initial, node.shape, gap));
      copies.push_back(Copy{t, 0, gap, 0});
    }
  }
}

Copy SplitPlacement::activate_sum(const OpNode& op, Copy sum) {
  if (!op.attrs.is_object() || !op.attrs.contains("activation")) return sum;
  const json& given = op.attrs["activation"];
  json attrs = given.is_object() ? given : json::object();
  const std::string type = given.is_object() ? given.at("type").get<std::string>() : given.get<std::string>();
  attrs.erase("type");  // the rest are clip's bounds
  const Shape& shape = graph_.tensor(op.outputs[0]).shape;
  const auto activation =
      registry_.bind(type, JsonField(attrs, fmt::format("{}'s activation", op.label())), std::vector<Shape>{shape});
  const DeviceTensor out = allocate(view(sum.group), sum.tensor.name, sum.tensor.plan);
  const Cycle ready =
      run_helper(sum.group, sum.ready, *activation, std::span<const DeviceTensor>(&sum.tensor, 1),
                 std::span<const DeviceTensor>(&out, 1), fmt::format("{}:{}@cg{}", op.label(), type, sum.group));
  release(sum.tensor);
  return Copy{out, sum.group, sum.region, ready};
}

void SplitPlacement::run_split(const OpNode& op, const OpSplit& s) {
  const RunStats s0 = machine_.stats();
  std::map<std::string, std::string> layouts;
  std::vector<std::vector<Copy>> results(op.outputs.size());  // per output, per group
  // Each group's inputs are obtained and its outputs allocated first, one group after another; then the groups'
  // pieces run, at once when the machine has several host threads (each group's clock, engine and memory are its
  // own, so the simulated result is the same).
  struct PieceRun {
    int g = 0;
    const GroupPiece* piece = nullptr;
    std::vector<DeviceTensor> in, out;
    std::vector<std::optional<MarginBuffer>> margins;  ///< per output: the consumer's buffer it writes into
    PackTotals packs;
  };
  std::vector<PieceRun> runs;
  // An attention kernel cut by heads: every piece writes its heads' Y into one tensor in core group 0's memory,
  // which its readers then find whole (docs/splitting.md, "Attention by heads").
  // Rows written into one output (rows_into_one): every piece's rows a box of it, where the layouts allow that.
  const bool into_one = s.whole_output && rows_fit_one_output(op, s);
  const bool shared_outputs = s.axis.rule == kHeadsRule || into_one;
  std::vector<DeviceTensor> shared;
  for (std::size_t gi = 0; gi < views_.size(); ++gi) {
    const int g = static_cast<int>(gi);
    if (s.blocks[gi].first == s.blocks[gi].second) continue;
    PieceRun& run = runs.emplace_back();
    run.g = g;
    run.piece = &piece(op, g);
    const GroupPiece& p = *run.piece;
    Cycle ready = 0;
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      if (p.work.dropped[k]) continue;
      PaddingPlan want = wanted(*p.bound, run.in.size());
      const TensorRegion& r = p.work.regions[k];
      const bool in_place = rows_in_place(graph_, op, k, r) || channels_in_place(graph_, op, s.axis.rule, k, r);
      // Its region as it lies, where g's memory holds exactly it in another layout and none in the piece's own (as
      // the whole op reads its inputs: read_as_it_lies.hpp). A copy in another group's memory is still copied to g
      // first, as the estimate prices it, rather than read over the link by every tile.
      if (!in_place && p.bound->reads_any_layout(run.in.size()) &&
          std::count(op.inputs.begin(), op.inputs.end(), op.inputs[k]) == 1) {
        const Copy* own = find_copy(op.inputs[k], r, g, &want);
        if (const Copy* c = find_copy(op.inputs[k], r, g, nullptr);
            c != nullptr && c->group == g && (own == nullptr || own->group != g)) {
          if (const std::optional<PaddingPlan> lies = read_as_it_lies(c->tensor.plan, want)) want = *lies;
        }
      }
      const Copy& c = obtain(op.inputs[k], r, g, want, false, in_place);
      run.in.push_back(c.tensor);
      // The consumer's own view of the copy (a margin buffer and a box of a whole copy keep their pitches).
      if (!c.margins && !c.pitched) run.in.back().plan = want;
      ready = std::max(ready, c.ready);
    }
    for (std::size_t k = 0; k < op.outputs.size(); ++k) {
      const PaddingPlan own = wanted(*p.bound, run.in.size() + k);
      const std::size_t t = op.outputs[k];
      if (shared_outputs) {
        const TensorNode& node = graph_.tensor(t);
        if (shared.size() == k) shared.push_back(allocate(view(0), node.name, into_one ? one_output(node) : own));
        run.margins.emplace_back();
        run.out.push_back(into_one
                              ? *row_box_of(shared[k], node.shape, p.work.regions[op.inputs.size() + k], own, false)
                              : shared[k]);
        continue;
      }
      run.margins.push_back(s.axis.reduces ? std::nullopt
                                           : margin_buffer(t, p.work.regions[op.inputs.size() + k], g, own));
      run.out.push_back(run.margins.back() ? run.margins.back()->piece : allocate(view(g), graph_.tensor(t).name, own));
    }
    machine_.start_no_earlier({g}, ready);
  }
  std::vector<int> piece_groups;
  std::vector<std::function<void()>> controls;
  for (PieceRun& run : runs) {
    piece_groups.push_back(run.g);
    controls.push_back([this, &op, &run] { run_piece(op, *run.piece, run.g, run.in, run.out, run.packs); });
  }
  machine_.run_group_controls(piece_groups, std::move(controls));
  PackTotals packs;
  std::vector<std::pair<std::size_t, Copy>> margin_copies;
  Cycle shared_ready = 0;  // every piece's end: a shared output is complete then
  for (const PieceRun& run : runs) shared_ready = std::max(shared_ready, machine_.group_clock(run.g));
  for (std::size_t k = 0; k < shared.size(); ++k) {
    Copy& c = results[k].emplace_back(Copy{shared[k], 0, TensorRegion{}, shared_ready});
    if (into_one) {  // read as the natural layout its room follows
      c.allocation = shared[k];
      const TensorNode& y = graph_.tensor(op.outputs[k]);
      c.tensor.plan = natural(y.shape, y.dtype);
    }
    layouts[shared[k].name] = c.tensor.plan.describe();
  }
  for (const PieceRun& run : runs) {
    const GroupPiece& p = *run.piece;
    for (std::size_t k = 0; k < op.outputs.size() && !shared_outputs; ++k) {
      const TensorRegion& region = p.work.regions[op.inputs.size() + k];
      const Cycle ready = machine_.group_clock(run.g);
      results[k].push_back(Copy{run.out[k], run.g, region, ready});
      layouts[fmt::format("{}@cg{}", run.out[k].name, run.g)] = run.out[k].plan.describe();
      if (const auto& m = run.margins[k]) {  // the piece is a box of its consumer's buffer, held with it
        results[k].back().borrowed = true;
        Copy& buffer = margin_copies.emplace_back(op.outputs[k], Copy{m->buffer, run.g, m->region, ready}).second;
        buffer.filled = region;
        buffer.allocation = m->allocation;
        buffer.margins = m->planes;
      }
    }
    s_.footprint.hold_bytes(run.packs.bytes);
    packs.cores += run.packs.cores;
    packs.bytes += run.packs.bytes;
    packs.max_bytes = std::max(packs.max_bytes, run.packs.max_bytes);
    packs.buffers.insert(packs.buffers.end(), run.packs.buffers.begin(), run.packs.buffers.end());
  }
  for (auto& [t, c] : margin_copies) keep(t, std::move(c));
  for (const DeviceAddr buffer : packs.buffers) machine_.free_bytes(buffer);
  s_.footprint.release_bytes(packs.bytes);
  for (std::size_t k = 0; k < op.outputs.size(); ++k) {
    if (!s.axis.reduces) {
      for (Copy& c : results[k]) keep(op.outputs[k], std::move(c));
      continue;
    }
    // The plan's reduction tree: its core-level pairs happened inside each group's sub-op; each group-level pair
    // is an add on the left group, reading the right group's partial.
    std::vector<std::optional<Copy>> partial(views_.size());
    for (Copy& c : results[k]) partial[static_cast<std::size_t>(c.group)] = std::move(c);
    const Shape& shape = graph_.tensor(op.outputs[k]).shape;
    const auto add = registry_.bind("add", JsonField(json::object(), "split"), std::vector<Shape>{shape, shape});
    for (const auto& level : s.tree) {
      for (const ReductionPair& pair : level) {
        auto& a = partial[static_cast<std::size_t>(s.pieces[pair.left].group)];
        auto& b = partial[static_cast<std::size_t>(s.pieces[pair.right].group)];
        if (pair.exchange != "cg" || !a || !b) continue;  // within a group, or a group holding padding only
        // Element-wise kernels run on the layout their inputs arrive in; both partials must share it.
        if (!b->tensor.layout().same_placement(a->tensor.layout())) {
          const DeviceTensor to = allocate(view(b->group), b->tensor.name, a->tensor.plan);
          machine_.start_no_earlier({b->group}, b->ready);
          ldmsim::relayout(view(b->group), b->tensor, to, fmt::format("relayout:{}@cg{}", b->tensor.name, b->group));
          release(b->tensor);
          b = Copy{to, b->group, b->region, machine_.group_clock(b->group)};
        }
        const DeviceTensor sum = allocate(view(a->group), a->tensor.name, a->tensor.plan);
        const DeviceTensor ins[2] = {a->tensor, b->tensor};
        const Cycle ready =
            run_helper(a->group, std::max(a->ready, b->ready), *add, ins, std::span<const DeviceTensor>(&sum, 1),
                       fmt::format("{}:reduce@cg{}+cg{}", op.label(), a->group, b->group));
        release(a->tensor);
        release(b->tensor);
        a = Copy{sum, a->group, TensorRegion{}, ready};
        b.reset();
      }
    }
    std::vector<Copy> live;
    for (auto& c : partial)
      if (c) live.push_back(std::move(*c));
    if (live.size() != 1) {
      throw std::logic_error(
          fmt::format("split executor: {}'s reduction tree left {} partials", op.label(), live.size()));
    }
    keep(op.outputs[k], activate_sum(op, std::move(live.front())));
  }
  OpRecord& r = s_.record(op, s0, machine_.stats(), std::move(layouts));
  // The op's own kernel did not run, its pieces' did: what it kept from an earlier run is not this run's.
  r.metrics = nullptr;
  std::vector<int> groups;
  for (std::size_t g = 0; g < s.blocks.size(); ++g)
    if (s.blocks[g].first != s.blocks[g].second) groups.push_back(static_cast<int>(g));
  r.split = OpSplitRecord{s.axis.rule, s.mode, s.parallelism, s.pieces.size(), std::move(groups), s.tree.size()};
  if (packs.cores > 0) r.constant_packs = ConstantPackRecord{packs.cores, packs.bytes, packs.max_bytes};
}

void SplitPlacement::run_piece(const OpNode& op, const GroupPiece& p, int g, std::span<const DeviceTensor> in,
                               std::span<const DeviceTensor> out, PackTotals& totals) {
  const std::string label = fmt::format("{}@cg{}", op.label(), g);
  if (!split_.options.pack_constants) return p.bound->run(view(g), in, out, label);
  // The sub-op's inputs (those its piece keeps) and which of them are constants.
  std::vector<std::size_t> tensors;
  std::vector<TensorRegion> regions;
  std::vector<bool> constant;
  for (std::size_t k = 0; k < op.inputs.size(); ++k) {
    if (p.work.dropped[k]) continue;
    tensors.push_back(op.inputs[k]);
    regions.push_back(p.work.regions[k]);
    constant.push_back(is_constant_tensor(graph_, op.inputs[k]));
  }
  const auto plan = p.bound->pack_plan(view(g).arch(), in, out, constant);
  if (!plan) return p.bound->run(view(g), in, out, label);
  // The values of the inputs the packs hold, as this piece sees them.
  std::vector<std::vector<f16>> values(tensors.size());
  for (const auto& core : plan->cores) {
    for (const packing::PackEntry& e : core) {
      if (e.input >= tensors.size() + plan->derived.size() || (e.input < tensors.size() && !constant[e.input])) {
        throw std::logic_error(fmt::format("{}: its pack plan reads input {}, not a constant", label, e.input));
      }
      if (e.input >= tensors.size() || !values[e.input].empty()) continue;  // derived, or already read
      const TensorNode& node = graph_.tensor(tensors[e.input]);
      values[e.input] = host_slice(initial_values(node).span(), node.shape, regions[e.input]);
    }
  }
  const std::vector<std::span<const f16>> spans(values.begin(), values.end());
  const PackImage image = stage_packs(view(g), *plan, spans, label);
  p.bound->run_packed(view(g), in, out, label, image.packs);
  if (image.base != 0) totals.buffers.push_back(image.base);
  totals.cores += image.cores;
  totals.bytes += image.packs.total_bytes;
  totals.max_bytes = std::max<std::uint64_t>(totals.max_bytes, image.packs.max_bytes);
}

void SplitPlacement::run_whole(const OpNode& op) {
  const RunStats s0 = machine_.stats();
  const auto& plans = plan_.op_plans[op.index];
  std::map<std::string, std::string> layouts;
  std::vector<DeviceTensor> in, out;
  Cycle ready = 0;
  for (std::size_t k = 0; k < op.inputs.size(); ++k) {
    const Copy& c = obtain(op.inputs[k], TensorRegion{}, 0, plans[k], true);
    in.push_back(c.tensor);
    in.back().plan = plans[k];
    ready = std::max(ready, wait_for(c, true));
    layouts[c.tensor.name] = plans[k].describe();
  }
  for (std::size_t k = 0; k < op.outputs.size(); ++k) {
    out.push_back(allocate(machine_, graph_.tensor(op.outputs[k]).name, plans[op.inputs.size() + k]));
    layouts[out.back().name] = plans[op.inputs.size() + k].describe();
  }
  machine_.start_no_earlier(all_groups(), ready);
  op.bound->run(machine_, in, out, op.label());
  const RunStats s1 = machine_.stats();
  for (std::size_t k = 0; k < op.outputs.size(); ++k)
    keep(op.outputs[k], Copy{out[k], 0, TensorRegion{}, s1.cycles, false, true});
  s_.record(op, s0, s1, std::move(layouts));
}

void SplitPlacement::hand_over(const Step& step) {
  const OpNode& op = graph_.ops()[step.op];
  const std::size_t input = op.inputs[0];
  const Copy source = obtain(input, TensorRegion{}, 0, plan_.op_plans[op.index][0], true);
  // The output takes that copy's buffer; the input's other copies die here.
  auto& copies = held_[input];
  const auto it = std::find_if(copies.begin(), copies.end(),
                               [&](const Copy& c) { return c.tensor.ptr.addr() == source.tensor.ptr.addr(); });
  copies.erase(it);
  free_all(input);
  Copy c = source;
  c.tensor.name = graph_.tensor(step.tensor).name;
  c.tensor.plan = step.plan;
  keep(step.tensor, c);
  s_.record_hand_over(op, c.tensor.name, step.plan, graph_.tensor(input).name);
}

void SplitPlacement::free_all(std::size_t t) {
  for (const Copy& c : held_[t])
    if (!c.borrowed) release(c.allocation ? *c.allocation : c.tensor);
  held_[t].clear();
}

std::vector<f16> SplitPlacement::download(std::size_t t) {
  // A whole copy if there is one; else the pieces, put together on the host (each memory read as it is).
  const TensorNode& node = graph_.tensor(t);
  if (const Copy* whole = find_copy(t, TensorRegion{}, 0, nullptr))
    return stage_out(machine_, whole->tensor, &s_.staging);
  const std::size_t axis = held_[t].front().region.axis;
  const std::uint64_t inner = node.shape.product(axis + 1, node.shape.rank()), outer = node.shape.product(0, axis);
  std::vector<f16> out(node.shape.elements());
  std::vector<bool> done(node.shape[axis], false);
  for (const Copy& c : held_[t]) {
    if (c.filled || c.region.whole || c.region.axis != axis) continue;
    const std::vector<f16> part = stage_out(machine_, c.tensor, &s_.staging);
    const std::uint64_t length = c.region.end - c.region.begin;
    if (part.size() != outer * length * inner) {
      throw std::logic_error(
          fmt::format("split executor: a piece of '{}' holds {} elements, its range [{}, {}) needs {}", node.name,
                      part.size(), c.region.begin, c.region.end, outer * length * inner));
    }
    for (std::uint64_t o = 0; o < outer; ++o) {
      std::copy_n(part.begin() + static_cast<std::ptrdiff_t>(o * length * inner), length * inner,
                  out.begin() + static_cast<std::ptrdiff_t>((o * node.shape[axis] + c.region.begin) * inner));
    }
    std::fill(done.begin() + static_cast<std::ptrdiff_t>(c.region.begin),
              done.begin() + static_cast<std::ptrdiff_t>(c.region.end), true);
  }
  if (std::find(done.begin(), done.end(), false) != done.end()) {
    return stage_out(machine_, obtain(t, TensorRegion{}, 0, natural(node.shape, node.dtype)).tensor, &s_.staging);
  }
  return out;
}

}  // namespace

std::unique_ptr<Placement> split_placement(RunState& state, SplitPlan split) {
  return std::make_unique<SplitPlacement>(state, std::move(split));
}

}  // namespace ldmsim::executor_detail
