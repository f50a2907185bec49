// The attention op: Q, Kt, V and Y seen as 2-D matrices of whole rows ([batches * rows, cols], unpadded: every
// column count is even), the program's other inputs as the fused op sees them ([their rows, their row's elements]).
#include <fmt/format.h>

#include <algorithm>

#include "../ops/op_support.hpp"
#include "../ops/tile_memo.hpp"
#include "attention_impl.hpp"
#include "attention_regions.hpp"

namespace ldmsim {

std::string AttentionMapping::str() const {
  return fmt::format("query rows {} per tile, each batch in {} part{}{}{}, {} B of ldm per core", program.tile_rows,
                     parts, parts == 1 ? "" : "s", q_broadcast ? ", Q read with Kt and V" : "",
                     prefetch ? ", the next batch read ahead" : "", program.ldm_bytes);
}

std::optional<AttentionMapping> choose_attention_mapping(const FusedProgram& program, std::size_t score_input,
                                                         const AttentionShape& shape, const Arch& arch) {
  // Q's and Y's rows (d, e elements) are whole words; Kt's rows may be odd: a batch's Kt is read as one block of
  // d * t elements (even), unpadded.
  if (shape.d % 2 == 1 || shape.e % 2 == 1 || shape.batches == 0 || shape.s == 0) {
    return std::nullopt;
  }
  if (program.outputs.size() != 1 || score_input >= program.inputs.size() || program.frame.i() != 1 ||
      program.frame.k() != shape.t || program.frame.rows() != shape.batches * shape.s) {
    return std::nullopt;
  }
  AttentionMapping m;
  // Every group gets an item when batches are fewer than groups: each batch's rows are cut into parts.
  const std::uint64_t groups = arch.core_groups, cores = arch.cores_per_group();
  m.parts = std::min<std::uint64_t>(shape.s, (groups + shape.batches - 1) / shape.batches);
  const std::uint64_t part_rows = (shape.s + m.parts - 1) / m.parts;
  const std::uint64_t per_core = std::max<std::uint64_t>(1, (part_rows + cores - 1) / cores);
  FusedMapping& p = m.program;
  // Only row-invariant inputs are read whole: a core's rows all lie in one or two batches, so a per-batch input (a
  // key mask) is read a tile's rows at a time, not every batch's by every core.
  p.resident = fusion::choose_resident(program, arch);
  for (std::size_t k = 0; k < program.inputs.size(); ++k) {
    const FusedValue& v = program.values[program.inputs[k]];
    if (k == score_input || v.rows(program.frame) > 1) p.resident[k] = false;
  }
  m.per_batch = fusion::per_batch_inputs(program, score_input);
  const std::size_t slots = fusion::plan_slots(program, p.resident).slots;
  const auto bytes = [&](std::uint64_t tile, std::uint64_t batches, bool q_broadcast) {
    return fusion::ldm_bytes(program, p.resident, slots, tile, 1) +
           fusion::attention_buffer_bytes(shape, tile, batches, q_broadcast ? part_rows : 0) +
           fusion::per_batch_bytes(program, m.per_batch, batches);
  };
  // Tiles of up to 16 rows: more only grow ldm, the products' rate saturates well before.
  std::uint64_t tile = std::min<std::uint64_t>(per_core, 16);
  while (tile > 1 && bytes(tile, 1, false) > arch.ldm_bytes) tile /= 2;
  if (bytes(tile, 1, false) > arch.ldm_bytes) return std::nullopt;
  // A group with more than one item reads the next one behind this one's work when ldm holds both; and the item's
  // Q rows with Kt and V when ldm holds them: one BCAST of the block moves the bytes of the cores' own reads without
  // a request per core (each a few rows, mostly request overhead). Reading ahead saves more than the BCAST of Q
  // (two batches of BERT-base on one sw26010pro group: both 16.7k cycles, ahead only 20.4k, Q only 21.7k).
  const auto fits = [&](std::uint64_t batches, bool q_broadcast) {
    return bytes(tile, batches, q_broadcast) <= arch.ldm_bytes;
  };
  const bool several = shape.batches * m.parts > groups;
  if (several && fits(2, true)) {
    m.prefetch = m.q_broadcast = true;
  } else if (several && fits(2, false)) {
    m.prefetch = true;
  } else {
    m.q_broadcast = fits(1, true);
  }
  p.tile_rows = tile;
  p.team = 1;
  p.workers = static_cast<std::uint32_t>(arch.total_cores());
  p.ldm_bytes = bytes(tile, m.prefetch ? 2 : 1, m.q_broadcast);
  return m;
}

namespace {

using Reference = std::function<std::vector<HostTensor>(std::span<const HostTensor>)>;

/// Q, Kt, V and Y as packed [batches * rows, cols] tensors of their own.
AttentionViews packed_views(const AttentionShape& s) {
  AttentionViews v;
  v.q = {0, s.s * s.d, s.d};
  v.kt = {0, s.d * s.t, s.t};
  v.v = {0, s.t * s.e, s.e};
  v.y = {0, s.s * s.e, s.e};
  return v;
}

/// Whether `at` places `batches` matrices of `rows` runs of `cols` elements inside a tensor of `elements`, each run
/// starting on a whole word (an even element) and runs of one matrix not overlapping.
bool placed_inside(const MatrixPlacement& at, std::uint64_t batches, std::uint64_t rows, std::uint64_t cols,
                   std::uint64_t elements) {
  if (cols % 2 != 0 || at.offset % 2 != 0 || (batches > 1 && at.batch % 2 != 0) || (rows > 1 && at.pitch % 2 != 0)) {
    return false;
  }
  if (rows > 1 && at.pitch < cols) return false;
  if (at.offset > elements || cols > elements - at.offset) return false;
  std::uint64_t room = elements - at.offset - cols;  // what the last run may start past the first
  if (batches > 1 && (at.batch == 0 || batches - 1 > room / at.batch)) return false;
  room -= (batches - 1) * at.batch;
  return rows <= 1 || (at.pitch > 0 && rows - 1 <= room / at.pitch);
}

class AttentionOp final : public BoundOp {
 public:
  AttentionOp(FusedProgram program, std::size_t score_input, AttentionShape shape, QueryScale scale,
              AttentionMapping mapping, std::vector<Shape> in, Shape out, Reference reference, Tolerance tolerance,
              std::uint64_t flops, std::string arch)
      : BoundOp(std::move(in), {std::move(out)}),
        program_(std::move(program)),
        score_input_(score_input),
        shape_(shape),
        scale_(scale),
        mapping_(std::move(mapping)),
        slots_(fusion::plan_slots(program_, mapping_.program.resident)),
        reference_(std::move(reference)),
        tolerance_(tolerance),
        flops_(flops),
        arch_(std::move(arch)) {
    packed_ = {input_shapes()[0], input_shapes()[1], input_shapes()[2], output_shapes()[0]};
  }

  /// This op reading its operands from (and writing Y into) other tensors, as attention_with_views says.
  std::shared_ptr<const BoundOp> with_views(const std::array<Shape, 3>& sources, const Shape& y_shape,
                                            const AttentionViews& views) const;
  /// attention_batch_regions and attention_batch_piece.
  std::optional<std::vector<AttentionRegion>> batch_regions(std::uint64_t b0, std::uint64_t b1) const;
  std::shared_ptr<const BoundOp> batch_piece(std::uint64_t b0, std::uint64_t b1, const Arch& arch) const;
  std::uint64_t batches() const { return shape_.batches; }
  AttentionLayout layout() const { return {shape_, views_}; }

  Shape4 view(std::size_t index) const override {
    if (views_ && placed(index)) return BoundOp::view(index);  // whole words at element offsets: no inner padding
    const AttentionShape& s = shape_;
    if (index == 0) return Shape4::from_dims({s.batches * s.s, s.d});
    if (index == 1) return Shape4::from_dims({s.batches * s.d, s.t});
    if (index == 2) return Shape4::from_dims({s.batches * s.t, s.e});
    if (index == input_shapes().size()) return Shape4::from_dims({s.batches * s.s, s.e});
    if (scale_ != QueryScale::kNone && index + 1 == input_shapes().size()) return Shape4::from_dims({1});
    const FusedValue& v = program_.values[program_.inputs[program_input(index)]];
    return Shape4::from_dims({v.rows(program_.frame), v.row_elements(program_.frame)});
  }
  PaddingSpec padding(std::size_t index) const override {
    if (views_ && placed(index)) return PaddingSpec{PaddingClass::kOneD};
    if (index == 1 && shape_.t % 2 == 1) return PaddingSpec{PaddingClass::kOneD};  // odd rows stay packed
    if (index < 3 || index == input_shapes().size()) {
      return PaddingSpec{PaddingClass::kTwoD, Unit::kSample, Unit::kSample, index == input_shapes().size()};
    }
    return PaddingSpec{PaddingClass::kOneD};
  }

  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    if (m.arch().name != arch_) {
      ops::reject(label, fmt::format("the attention kernel was mapped for arch {}, not {}: fuse the graph for the "
                                     "arch it runs on",
                                     arch_, m.arch().name));
    }
    const auto whole_rows = [&](const DeviceTensor& t) {
      if (!t.layout().only_tail_padded()) {
        ops::reject(label, fmt::format("'{}' is stored with padding inside its rows ({}); the attention kernel reads "
                                       "whole rows: run with the default staging (--staging method) or --fusion off",
                                       t.name, t.plan.describe()));
      }
    };
    for (std::size_t k = 0; k < 3; ++k) whole_rows(in[k]);
    whole_rows(out[0]);
    fusion::AttentionArgs a;
    a.program =
        fusion::KernelArgs{&program_, &mapping_.program, &slots_, {}, {}, {}, {}, {}, fusion::row_indexes(program_)};
    for (std::size_t k = 0; k < program_.inputs.size(); ++k) {
      if (k == score_input_) {
        a.program.in.emplace_back();
        a.program.in_layout.emplace_back();
        continue;
      }
      const DeviceTensor& t = in[3 + (k < score_input_ ? k : k - 1)];
      if (mapping_.per_batch[k]) whole_rows(t);  // read a row at a time by BCAST
      a.program.in.emplace_back(t.ptr);
      a.program.in_layout.push_back(t.layout());
    }
    a.program.out.emplace_back();
    a.program.out_layout.emplace_back();
    a.score_input = score_input_;
    a.shape = shape_;
    a.parts = mapping_.parts;
    a.prefetch = mapping_.prefetch;
    a.q_broadcast = mapping_.q_broadcast;
    a.per_batch = &mapping_.per_batch;
    a.q = DevicePtr<const f16>(in[0].ptr);
    a.kt = DevicePtr<const f16>(in[1].ptr);
    a.v = DevicePtr<const f16>(in[2].ptr);
    a.y = out[0].ptr;
    a.views = views_ ? *views_ : packed_views(shape_);
    a.scale = scale_;
    if (scale_ != QueryScale::kNone) a.scalar = DevicePtr<const f16>(in.back().ptr);
    a.memo_source = ops::TileMemo::next_source_id();
    ops::launch_all(m, label, fusion::attention_kernel, a);
  }

  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    if (!views_) return reference_(in);
    const AttentionShape& s = shape_;
    const AttentionViews& v = *views_;
    std::vector<HostTensor> inner(in.begin(), in.end());
    inner[0] = picked(in[0], v.q, s.batches, s.s, s.d, false, packed_.q_shape);
    inner[1] = picked(in[1], v.kt, s.batches, s.d, s.t, v.k_rows, packed_.kt_shape);
    inner[2] = picked(in[2], v.v, s.batches, s.t, s.e, false, packed_.v_shape);
    const HostTensor y = reference_(inner)[0];
    HostTensor out{output_shapes()[0], std::vector<float>(output_shapes()[0].elements())};
    for (std::uint64_t b = 0; b < s.batches; ++b) {
      for (std::uint64_t r = 0; r < s.s; ++r) {
        const float* row = y.data.data() + (b * s.s + r) * s.e;
        std::copy(row, row + s.e,
                  out.data.begin() + static_cast<std::ptrdiff_t>(v.y.offset + b * v.y.batch + r * v.y.pitch));
      }
    }
    return {out};
  }
  OpCost cost() const override { return {flops_, mapping_.program.ldm_bytes}; }
  std::optional<double> kernel_estimate(const Arch& arch, KernelEstimates& /*memo*/) const override {
    return fusion::estimate_attention_cycles(program_, score_input_, shape_, arch);
  }
  Tolerance tolerance() const override { return tolerance_; }

 private:
  /// The program input an op input (>= 3) feeds: the op's inputs skip the scores.
  std::size_t program_input(std::size_t index) const {
    const std::size_t k = index - 3;
    return k < score_input_ ? k : k + 1;
  }

  /// Whether op operand `index` (an input, or the output at input_shapes().size()) is a product operand: Q, Kt, V or Y.
  bool placed(std::size_t index) const { return index < 3 || index == input_shapes().size(); }

  /// Operands' shapes as the op had them packed (the reference's).
  struct PackedShapes {
    Shape q_shape, kt_shape, v_shape, y_shape;
  };

  /// The [batches, rows, cols] matrices `at` places in `t`, as a packed tensor of `shape` (`columns`: t holds each
  /// matrix's transpose, [cols, rows], placed by `at`).
  static HostTensor picked(const HostTensor& t, const MatrixPlacement& at, std::uint64_t batches, std::uint64_t rows,
                           std::uint64_t cols, bool columns, const Shape& shape) {
    HostTensor out{shape, std::vector<float>(batches * rows * cols)};
    for (std::uint64_t b = 0; b < batches; ++b) {
      for (std::uint64_t r = 0; r < rows; ++r) {
        for (std::uint64_t c = 0; c < cols; ++c) {
          const std::uint64_t source =
              columns ? at.offset + b * at.batch + c * at.pitch + r : at.offset + b * at.batch + r * at.pitch + c;
          out.data[(b * rows + r) * cols + c] = t.data[source];
        }
      }
    }
    return out;
  }

  /// Q's, Kt's, V's and Y's matrices (which 0..3): where they lie, their rows and columns, and their tensor's shape.
  struct Operand {
    MatrixPlacement at;
    std::uint64_t rows, cols;
    Shape tensor;
  };
  Operand operand(std::size_t which) const {
    const AttentionShape& s = shape_;
    const AttentionViews v = views_ ? *views_ : packed_views(s);
    const bool k_rows = views_ && views_->k_rows;
    switch (which) {
      case 0:
        return {v.q, s.s, s.d, input_shapes()[0]};
      case 1:
        return {v.kt, k_rows ? s.t : s.d, k_rows ? s.d : s.t, input_shapes()[1]};
      case 2:
        return {v.v, s.t, s.e, input_shapes()[2]};
      default:
        return {v.y, s.s, s.e, output_shapes()[0]};
    }
  }
  /// Where batches [b0, b1) of Q, Kt, V and Y lie: each a range of its tensor's axis that holds one batch most
  /// tightly (fusion::batch_range_axis); nullopt when one is not a range.
  std::optional<std::array<fusion::BatchRange, 4>> operand_ranges(std::uint64_t b0, std::uint64_t b1) const {
    std::array<fusion::BatchRange, 4> out;
    for (std::size_t which = 0; which < 4; ++which) {
      const Operand o = operand(which);
      const auto axis = fusion::batch_range_axis(o.tensor, o.at, o.rows, o.cols);
      if (!axis) return std::nullopt;
      const auto r = fusion::batch_range(o.tensor, o.at, o.rows, o.cols, *axis, b0, b1);
      if (!r) return std::nullopt;
      out[which] = *r;
    }
    return out;
  }
  /// The frame's batch axis (the one axis before the query rows that has more than one index), or nullopt.
  std::optional<std::size_t> frame_batch_axis() const {
    const FusionFrame& f = program_.frame;
    std::optional<std::size_t> axis;
    for (std::size_t a = 0; a + 1 < f.k_begin; ++a) {
      if (f.shape[a] == 1) continue;
      if (axis || f.shape[a] != shape_.batches) return std::nullopt;
      axis = a;
    }
    return axis;
  }
  /// The axis of a packed [batch..., rows, cols] shape that holds the batches (one of more than one index).
  static std::optional<std::size_t> packed_batch_axis(const Shape& shape, std::uint64_t batches) {
    std::optional<std::size_t> axis;
    for (std::size_t a = 0; a + 2 < shape.rank(); ++a) {
      if (shape[a] == 1) continue;
      if (axis || shape[a] != batches) return std::nullopt;
      axis = a;
    }
    return axis;
  }

  FusedProgram program_;
  std::optional<AttentionViews> views_;
  PackedShapes packed_;
  std::size_t score_input_;
  AttentionShape shape_;
  QueryScale scale_;
  AttentionMapping mapping_;
  fusion::SlotPlan slots_;
  Reference reference_;
  Tolerance tolerance_;
  std::uint64_t flops_;
  std::string arch_;
};

std::shared_ptr<const BoundOp> AttentionOp::with_views(const std::array<Shape, 3>& sources, const Shape& y_shape,
                                                       const AttentionViews& views) const {
  const AttentionShape& s = shape_;
  if (!placed_inside(views.q, s.batches, s.s, s.d, sources[0].elements()) ||
      !placed_inside(views.kt, s.batches, views.k_rows ? s.t : s.d, views.k_rows ? s.d : s.t, sources[1].elements()) ||
      !placed_inside(views.v, s.batches, s.t, s.e, sources[2].elements()) ||
      !placed_inside(views.y, s.batches, s.s, s.e, y_shape.elements()) || y_shape.elements() != s.batches * s.s * s.e) {
    return nullptr;
  }
  // Y's rows fill y_shape exactly once.
  std::vector<char> written(y_shape.elements(), 0);
  for (std::uint64_t b = 0; b < s.batches; ++b) {
    for (std::uint64_t r = 0; r < s.s; ++r) {
      for (std::uint64_t c = 0; c < s.e; ++c) {
        char& w = written[views.y.offset + b * views.y.batch + r * views.y.pitch + c];
        if (w != 0) return nullptr;
        w = 1;
      }
    }
  }
  std::vector<Shape> in = input_shapes();
  std::copy(sources.begin(), sources.end(), in.begin());
  auto copy = std::make_shared<AttentionOp>(program_, score_input_, shape_, scale_, mapping_, std::move(in), y_shape,
                                            reference_, tolerance_, flops_, arch_);
  copy->views_ = views;
  copy->packed_ = packed_;  // the reference's operands keep their packed shapes
  return copy;
}

/// Shape `s` with axis `axis` cut to `extent`.
Shape cut_shape(const Shape& s, std::size_t axis, std::uint64_t extent) {
  std::vector<std::uint64_t> dims(s.dims().begin(), s.dims().end());
  dims[axis] = extent;
  return Shape(dims, "an attention piece's tensor");
}

/// Copies indices [b0, b0 + n) of axis `axis` between a tensor of shape `whole` and one of the same shape cut to n
/// there (`into_whole`: `from` is the piece and `to` the whole, else the other way round).
void copy_range(const Shape& whole, std::size_t axis, std::uint64_t b0, std::uint64_t n, const float* from, float* to,
                bool into_whole) {
  const std::uint64_t inner = whole.product(axis + 1, whole.rank()), outer = whole.product(0, axis);
  for (std::uint64_t o = 0; o < outer; ++o) {
    const std::uint64_t in_whole = (o * whole[axis] + b0) * inner, in_piece = o * n * inner;
    const float* run = from + (into_whole ? in_piece : in_whole);
    std::copy(run, run + n * inner, to + (into_whole ? in_whole : in_piece));
  }
}

std::optional<std::vector<AttentionRegion>> AttentionOp::batch_regions(std::uint64_t b0, std::uint64_t b1) const {
  const std::uint64_t batches = shape_.batches;
  if (b0 >= b1 || b1 > batches) return std::nullopt;
  const std::optional<std::size_t> frame_axis = frame_batch_axis();
  if (!frame_axis) return std::nullopt;
  const std::size_t inputs = input_shapes().size();
  std::vector<AttentionRegion> out(inputs + 1);
  const auto ranges = operand_ranges(b0, b1);
  if (!ranges) return std::nullopt;
  for (std::size_t which = 0; which < 4; ++which) {
    const fusion::BatchRange& r = (*ranges)[which];
    if (r.begin == 0 && r.end == operand(which).tensor[r.axis]) continue;  // the whole tensor
    out[which < 3 ? which : inputs] = AttentionRegion{false, r.axis, r.begin, r.end};
  }
  for (std::size_t index = 3; index < inputs; ++index) {
    if (scale_ != QueryScale::kNone && index + 1 == inputs) continue;  // Q's scale: a scalar, whole
    const std::size_t value = program_.inputs[program_input(index)];
    const auto axis = fused_tensor_axis(program_, input_shapes()[index], value, *frame_axis);
    if (axis && input_shapes()[index][*axis] == batches && b1 - b0 < batches)
      out[index] = AttentionRegion{false, *axis, b0, b1};
  }
  return out;
}

std::shared_ptr<const BoundOp> AttentionOp::batch_piece(std::uint64_t b0, std::uint64_t b1, const Arch& arch) const {
  const auto regions = batch_regions(b0, b1);
  if (!regions) return nullptr;
  const std::uint64_t n = b1 - b0, batches = shape_.batches;
  const std::size_t frame_axis = *frame_batch_axis();
  // The program on n batches: the frame and every value that has the batch axis cut.
  FusedProgram piece = program_;
  std::vector<std::uint64_t> frame(program_.frame.shape.dims().begin(), program_.frame.shape.dims().end());
  frame[frame_axis] = n;
  piece.frame.shape = Shape(frame, "an attention piece's frame");
  for (FusedValue& v : piece.values) {
    if (v.dims[frame_axis] == batches) v.dims[frame_axis] = n;
  }
  AttentionShape shape = shape_;
  shape.batches = n;
  std::optional<AttentionMapping> mapping = choose_attention_mapping(piece, score_input_, shape, arch);
  if (!mapping) return nullptr;
  const std::size_t inputs = input_shapes().size();
  const auto region_shape = [&](const Shape& whole, const AttentionRegion& r) {
    return r.whole ? whole : cut_shape(whole, r.axis, r.end - r.begin);
  };
  std::vector<Shape> in;
  for (std::size_t k = 0; k < inputs; ++k) in.push_back(region_shape(input_shapes()[k], (*regions)[k]));
  const Shape out = output_shapes()[0];  // the pieces write their batches' Y into one tensor
  // Packed operands (the reference's) of n batches.
  std::array<Shape, 4> whole_packed{packed_.q_shape, packed_.kt_shape, packed_.v_shape, packed_.y_shape};
  std::array<std::size_t, 4> packed_axis{};
  PackedShapes packed;
  std::array<Shape*, 4> cut{&packed.q_shape, &packed.kt_shape, &packed.v_shape, &packed.y_shape};
  for (std::size_t which = 0; which < 4; ++which) {
    const auto axis = packed_batch_axis(whole_packed[which], batches);
    if (!axis) return nullptr;
    packed_axis[which] = *axis;
    *cut[which] = cut_shape(whole_packed[which], *axis, n);
  }
  // The reference: the piece's batches put in place among zeros for the whole op's reference, and its Y taken out.
  std::vector<std::optional<std::size_t>> input_axis(inputs);
  for (std::size_t k = 3; k < inputs; ++k) {
    if (!(*regions)[k].whole) input_axis[k] = (*regions)[k].axis;
  }
  const std::vector<Shape> whole_inputs = input_shapes();
  auto reference = [whole = reference_, whole_packed, packed_axis, input_axis, whole_inputs, b0,
                    n](std::span<const HostTensor> given) {
    std::vector<HostTensor> all;
    for (std::size_t k = 0; k < given.size(); ++k) {
      const std::optional<std::size_t> axis = k < 3 ? std::optional<std::size_t>(packed_axis[k]) : input_axis[k];
      if (!axis) {
        all.push_back(given[k]);
        continue;
      }
      const Shape& whole_shape = k < 3 ? whole_packed[k] : whole_inputs[k];
      HostTensor t{whole_shape, std::vector<float>(whole_shape.elements(), 0.0f)};
      copy_range(whole_shape, *axis, b0, n, given[k].data.data(), t.data.data(), true);
      all.push_back(std::move(t));
    }
    std::vector<HostTensor> y = whole(all);
    HostTensor piece_y{cut_shape(whole_packed[3], packed_axis[3], n), {}};
    piece_y.data.assign(piece_y.shape.elements(), 0.0f);
    copy_range(whole_packed[3], packed_axis[3], b0, n, y[0].data.data(), piece_y.data.data(), false);
    return std::vector<HostTensor>{std::move(piece_y)};
  };
  auto op = std::make_shared<AttentionOp>(std::move(piece), score_input_, shape, scale_, std::move(*mapping),
                                          std::move(in), out, std::move(reference), tolerance_,
                                          flops_ * n / std::max<std::uint64_t>(1, batches), arch.name);
  op->packed_ = packed;
  // Q, Kt and V where the piece's tensors (the regions) hold them; Y at its batches' place in the whole op's Y.
  const auto ranges = operand_ranges(b0, b1);
  AttentionViews views = views_ ? *views_ : packed_views(shape_);
  views.q = (*ranges)[0].at, views.kt = (*ranges)[1].at, views.v = (*ranges)[2].at;
  views.y.offset += b0 * views.y.batch;
  op->views_ = views;
  return op;
}

}  // namespace

std::optional<AttentionLayout> attention_layout(const BoundOp& op) {
  const auto* attention = dynamic_cast<const AttentionOp*>(&op);
  return attention == nullptr ? std::nullopt : std::optional<AttentionLayout>(attention->layout());
}

std::optional<std::uint64_t> attention_batches(const BoundOp& op) {
  const auto* attention = dynamic_cast<const AttentionOp*>(&op);
  return attention == nullptr ? std::nullopt : std::optional<std::uint64_t>(attention->batches());
}

std::optional<std::vector<AttentionRegion>> attention_batch_regions(const BoundOp& op, std::uint64_t begin,
                                                                    std::uint64_t end) {
  const auto* attention = dynamic_cast<const AttentionOp*>(&op);
  return attention == nullptr ? std::nullopt : attention->batch_regions(begin, end);
}

std::shared_ptr<const BoundOp> attention_batch_piece(const BoundOp& op, std::uint64_t begin, std::uint64_t end,
                                                     const Arch& arch) {
  const auto* attention = dynamic_cast<const AttentionOp*>(&op);
  return attention == nullptr ? nullptr : attention->batch_piece(begin, end, arch);
}

std::shared_ptr<const BoundOp> attention_with_views(const BoundOp& op, const std::array<Shape, 3>& sources,
                                                    const Shape& y_shape, const AttentionViews& views) {
  const auto* attention = dynamic_cast<const AttentionOp*>(&op);
  return attention == nullptr ? nullptr : attention->with_views(sources, y_shape, views);
}

std::shared_ptr<const BoundOp> make_attention_op(FusedProgram program, std::size_t score_input, AttentionShape shape,
                                                 QueryScale scale, AttentionMapping mapping, std::vector<Shape> inputs,
                                                 Shape output, Reference reference, Tolerance tolerance,
                                                 std::uint64_t flops, std::string arch) {
  return std::make_shared<AttentionOp>(std::move(program), score_input, shape, scale, std::move(mapping),
                                       std::move(inputs), std::move(output), std::move(reference), tolerance, flops,
                                       std::move(arch));
}

}  // namespace ldmsim
