// cumsum along the last axis (ONNX CumSum; `exclusive`, `reverse`) of an f16 or int32 tensor: each output element
// is the sum of its row's elements up to it (before it when exclusive; from it to the row's end when reversed).
// The running sum is kept in double, added in the row's order; each output is held as the element type: fp16
// rounded to nearest even once, int32 wrapping as two's complement (numpy's and PyTorch's int32 sums). Each core
// owns an even-bounded share of the elements. Where rows span shares, a first launch sums each share's part of the
// row its neighbour continues, so a share's carry is a few totals: those of the shares before it in its first row
// (after it in its last, reversed). The share is then scanned in tiles, the sum carried from element to element and
// started afresh at each row's start. Another axis is made the last by a transpose around the op (the ONNX import).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "op_support.hpp"
#include "ops.hpp"
#include "view_copy.hpp"

namespace ldmsim::ops {

namespace {

struct CumSumArgs {
  bool exclusive = false, reverse = false;
  DType type = DType::kF16;
  std::uint64_t row = 1;  ///< elements per row (the last axis)
  std::size_t elements = 0;
  DevicePtr<const f16> x;  ///< 1-D layouts of x_units and y_units 2-byte units
  DevicePtr<f16> y;
  std::size_t x_units = 0, y_units = 0;
  DevicePtr<f16> totals;  ///< per share, the sum of its part of the row its neighbour continues (a double each)
};

/// The shares' partition (tiling::my_share's): the share of part p of `parts`.
constexpr std::size_t kMinShare = tiling::kStreamingShare / 2;
std::size_t share_parts(const Core& core, std::size_t elements) {
  return std::clamp<std::size_t>(elements / kMinShare, 1, tiling::worker_count(core));
}

/// The running sum held as the element type (int32: modulo 2^32, as a wrapping int32 sum).
double held(double sum, DType type) {
  if (type == DType::kF16) return static_cast<double>(static_cast<float>(f16(static_cast<float>(sum))));
  const double wrapped = std::fmod(sum, 4294967296.0);
  const auto word = static_cast<std::uint32_t>(static_cast<std::int64_t>(wrapped));
  return static_cast<double>(static_cast<std::int32_t>(word));
}

void store(f16* units, DType type, std::size_t i, double v) {
  if (type == DType::kF16) {
    units[i] = f16(static_cast<float>(v));
    return;
  }
  const auto word = static_cast<std::uint32_t>(static_cast<std::int32_t>(held(v, type)));
  units[2 * i] = f16::from_bits(static_cast<std::uint16_t>(word & 0xffffu));
  units[2 * i + 1] = f16::from_bits(static_cast<std::uint16_t>(word >> 16));
}

/// The carry of elements [first, last), read through `buf` in tiles and added in the scan's order (last to first
/// when reversed), as the scan would have carried it.
double carry_of(Core& core, const CumSumArgs& a, LdmSpan<f16> buf, std::size_t tile, std::size_t first,
                std::size_t last) {
  const std::size_t u = units_of(a.type);
  std::vector<tiling::Range> tiles;
  for (std::size_t at = first; at < last; at += tile) tiles.push_back({at, std::min(last, at + tile)});
  if (a.reverse) std::reverse(tiles.begin(), tiles.end());
  double carry = 0.0;
  for (const tiling::Range& t : tiles) {
    const tiling::RangeRead r = tiling::get_range(core, buf, a.x, a.x_units, tiling::Range{t.begin * u, t.end * u});
    core.wait(r.handle);
    const std::span<const f16> units(buf.data() + r.first, t.size() * u);
    for (std::size_t k = 0; k < t.size(); ++k) {
      const double v = element_value(units, a.type, a.reverse ? t.size() - 1 - k : k);
      carry = a.type == DType::kF16 ? carry + v : held(carry + v, a.type);
    }
    core.compute({.flops = t.size()});
  }
  return carry;
}

/// The elements of `share` that a neighbouring share's scan continues: forward, those in its last row (the next
/// share carries on in that row); reversed, those in its first row.
tiling::Range continued_part(const tiling::Range& share, std::uint64_t row, bool reverse) {
  if (reverse)
    return {share.begin, std::min<std::size_t>(share.end, static_cast<std::size_t>((share.begin / row + 1) * row))};
  return {std::max<std::size_t>(share.begin, static_cast<std::size_t>((share.end - 1) / row * row)), share.end};
}

/// The first pass: each share's sum of its continued part, in the scan's order, as a double in slot `part` of
/// `totals` (8 bytes, two 4-byte words).
void cumsum_totals_kernel(Core& core, const CumSumArgs& a) {
  const tiling::Range share = tiling::my_share(core, a.elements, kMinShare);
  if (share.empty()) return;
  const std::size_t tile =
      tiling::floor_even(std::max<std::size_t>(2, tiling::fit_elements(core, 2 * units_of(a.type), 4096, 64)));
  LdmSpan<f16> in = core.ldm().alloc<f16>(tile * units_of(a.type) + 2);
  const tiling::Range part = continued_part(share, a.row, a.reverse);
  const double total = carry_of(core, a, in, tile, part.begin, part.end);
  LdmSpan<f16> word = core.ldm().alloc<f16>(4);
  std::memcpy(static_cast<void*>(word.data()), &total, sizeof total);
  core.put(a.totals + 4 * tiling::worker_index(core), LdmSpan<const f16>(word)).wait();
}

/// The carry into `share`: the totals of the shares before it in its first row (forward) or after it in its last
/// row (reversed), added in the scan's order.
double carry_into(Core& core, const CumSumArgs& a, const tiling::Range& share) {
  const std::uint64_t row = a.row;
  const std::size_t parts = share_parts(core, a.elements), me = tiling::worker_index(core);
  std::size_t first = me, last = me;  // the parts whose totals it takes: [first, last]
  if (!a.reverse && share.begin % row != 0) {
    const std::size_t row_start = static_cast<std::size_t>(share.begin / row * row);
    first = me - 1;
    while (first > 0 && tiling::split_even(a.elements, parts, first).begin > row_start) --first;
    last = me - 1;
  } else if (a.reverse && share.end % row != 0) {
    const std::size_t row_end = static_cast<std::size_t>((share.end / row + 1) * row);
    first = me + 1;
    last = me + 1;
    while (last + 1 < parts && tiling::split_even(a.elements, parts, last + 1).begin < row_end) ++last;
  } else {
    return 0.0;
  }
  const std::size_t count = last - first + 1;
  LdmSpan<f16> words = core.ldm().alloc<f16>(4 * count);
  core.wait(core.get(words, DevicePtr<const f16>(a.totals + 4 * first)));
  std::vector<double> totals(count);
  std::memcpy(totals.data(), words.data(), count * sizeof(double));
  if (a.reverse) std::reverse(totals.begin(), totals.end());
  double carry = 0.0;
  for (const double t : totals) carry = a.type == DType::kF16 ? carry + t : held(carry + t, a.type);
  core.compute({.flops = count});
  return carry;
}

void cumsum_kernel(Core& core, const CumSumArgs& a) {
  const tiling::Range share = tiling::my_share(core, a.elements, kMinShare);
  if (share.empty()) return;
  const std::size_t u = units_of(a.type);
  const std::size_t tile = tiling::floor_even(std::max<std::size_t>(2, tiling::fit_elements(core, 2 * u, 4096, 64)));
  LdmSpan<f16> in = core.ldm().alloc<f16>(tile * u + 2);
  LdmSpan<f16> out = core.ldm().alloc<f16>(tile * u + 2);
  const std::uint64_t row = a.row;
  double carry = carry_into(core, a, share);
  std::vector<tiling::Range> tiles;
  tiling::for_each_tile(share, tile, [&](tiling::Range t) { tiles.push_back(t); });
  if (a.reverse) std::reverse(tiles.begin(), tiles.end());
  for (const tiling::Range& t : tiles) {
    const tiling::RangeRead r = tiling::get_range(core, in, a.x, a.x_units, tiling::Range{t.begin * u, t.end * u});
    core.wait(r.handle);
    const std::span<const f16> units(in.data() + r.first, t.size() * u);
    for (std::size_t k = 0; k < t.size(); ++k) {
      const std::size_t i = a.reverse ? t.size() - 1 - k : k;
      const std::size_t e = t.begin + i;
      // A row starts afresh: at its first element forward, at its last one reversed.
      if (a.reverse ? (e + 1) % row == 0 : e % row == 0) carry = 0.0;
      const double v = element_value(units, a.type, i);
      const double inclusive = held(carry + v, a.type);
      store(out.data(), a.type, i, a.exclusive ? carry : inclusive);
      carry = a.type == DType::kF16 ? carry + v : inclusive;
    }
    core.compute({.flops = t.size()});
    // Puts are whole 4-byte words: an fp16 output's odd last element goes with the zero its layout pads it with.
    std::size_t end = t.end * u;
    if (end % 2 == 1 && end < a.y_units) out[t.size() * u] = f16(0.0f), ++end;
    tiling::put_range(core, a.y, out, tiling::Range{t.begin * u, end}).wait();
  }
}

class CumSumOp final : public BoundOp {
 public:
  CumSumOp(Shape x, DType type, bool exclusive, bool reverse)
      : BoundOp({x}, {x}), type_(type), exclusive_(exclusive), reverse_(reverse) {
    set_dtypes({type, type});
  }
  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    // The kernel reads and writes elements in order: tensors staged with padding inside (naive staging) are copied
    // into their 1-D layouts first (the input) or after (the output).
    DeviceScratch scratch(m);
    const Shape& s = input_shapes()[0];
    const PaddingPlan plan = plan_one_d(unit_view(s, type_));
    const StridedView view = units_of(type_) > 1 ? broadcast_view(s, s).widened(units_of(type_)) : broadcast_view(s, s);
    DeviceTensor x = in[0];
    if (!in[0].layout().only_tail_padded()) {
      x = scratch.tensor(label + ":flat_input", plan);
      run_view_copy(m, label + ":flat", view, DevicePtr<const f16>(in[0].ptr), in[0].layout(), x.ptr, plan.layout);
    }
    const bool out_padded_inside = !out[0].layout().only_tail_padded();
    const DeviceTensor y = out_padded_inside ? scratch.tensor(label + ":flat_output", plan) : out[0];
    const std::size_t workers = std::size_t{m.arch().core_groups} * m.arch().cores_per_group();
    CumSumArgs a{exclusive_,
                 reverse_,
                 type_,
                 s.rank() == 0 ? 1 : s[s.rank() - 1],
                 s.elements(),
                 DevicePtr<const f16>(x.ptr),
                 y.ptr,
                 x.layout().total,
                 y.layout().total,
                 {}};
    // A row that spans shares: each share's part of it summed first, so that a share's carry is a few totals.
    const std::size_t parts = std::clamp<std::size_t>(a.elements / kMinShare, 1, workers);
    bool spanned = false;
    for (std::size_t p = 1; p < parts && !spanned; ++p)
      spanned = tiling::split_even(a.elements, parts, p).begin % a.row != 0;
    if (spanned) {
      a.totals = scratch.alloc<f16>(4 * workers);
      launch_all(m, label + ":totals", cumsum_totals_kernel, a);
    }
    launch_all(m, label, cumsum_kernel, a);
    if (out_padded_inside) {
      run_view_copy(m, label + ":unflat", view, DevicePtr<const f16>(y.ptr), plan.layout, out[0].ptr, out[0].layout());
    }
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    const Shape& s = input_shapes()[0];
    const std::uint64_t row = s.rank() == 0 ? 1 : s[s.rank() - 1];
    HostTensor out{s, std::vector<float>(s.elements())};
    for (std::uint64_t r0 = 0; r0 < s.elements(); r0 += row) {
      double sum = 0.0;
      for (std::uint64_t k = 0; k < row; ++k) {
        const std::uint64_t i = reverse_ ? r0 + row - 1 - k : r0 + k;
        const double v = in[0].data[i];
        const double inclusive = held(sum + v, type_);
        out.data[i] = static_cast<float>(exclusive_ ? held(sum, type_) : inclusive);
        sum = type_ == DType::kF16 ? sum + v : inclusive;
      }
    }
    return {out};
  }
  OpCost cost() const override { return {input_shapes()[0].elements(), 0}; }
  Tolerance tolerance() const override { return type_ == DType::kF16 ? Tolerance{2e-3, 1.0 / 512} : Tolerance{0, 0}; }

 private:
  DType type_;
  bool exclusive_, reverse_;
};

class CumSumKind final : public OperatorKind {
 public:
  std::string_view name() const override { return "cumsum"; }
  Arity arity() const override { return Arity{1, 1, 1}; }
  std::unique_ptr<BoundOp> bind(const JsonField& attrs, std::span<const Shape> inputs) const override {
    const std::vector<DType> types(inputs.size(), DType::kF16);
    return bind_typed(attrs, inputs, types);
  }
  std::unique_ptr<BoundOp> bind_typed(const JsonField& attrs, std::span<const Shape> in,
                                      std::span<const DType> types) const override {
    check_attrs(attrs, {"exclusive", "reverse"});
    if (types[0] != DType::kF16 && types[0] != DType::kI32) {
      reject(name(), fmt::format("input 0 is {}, expected f16 or int32", to_string(types[0])));
    }
    const bool exclusive = int_attr(attrs, "exclusive", 0, 0, 1) == 1;
    const bool reverse = int_attr(attrs, "reverse", 0, 0, 1) == 1;
    return std::make_unique<CumSumOp>(in[0], types[0], exclusive, reverse);
  }
};

}  // namespace

void add_cumsum_kind(OperatorRegistry& registry) {
  registry.add(std::make_unique<CumSumKind>());
}

}  // namespace ldmsim::ops
