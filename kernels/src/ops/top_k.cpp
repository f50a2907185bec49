// top_k along the last axis (ONNX TopK: `k`, `largest`, `sorted`) of an f16 tensor: each row's k largest elements
// (smallest with largest 0) and their indices (int32), ordered largest first (smallest first), ties to the lower
// index, NaN beyond every number as numpy and PyTorch order it; sorted 0 gives the same order. Values are copied,
// never rounded. Cores own whole rows; where rows are fewer than cores and long, each row is cut into parts, a first
// launch reduces every part to its own k candidates (values and indices, in scratch) and a second picks each row's k
// among them. A core reads its rows in tiles and keeps its running candidates in ldm (k values and indices with a
// tile's worth of newcomers), so k is bounded by the local store: run() refuses a k that cannot fit by name.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "op_support.hpp"
#include "ops.hpp"
#include "view_copy.hpp"

namespace ldmsim::ops {

namespace {

/// One candidate: a value and its index along the row.
struct Candidate {
  float value = 0.0f;
  std::int32_t index = 0;
};

/// True when `a` comes before `b` in the output: the larger (smaller) value first, NaN beyond every number, ties
/// to the lower index.
bool ranks_before(const Candidate& a, const Candidate& b, bool largest) {
  const bool a_nan = std::isnan(a.value), b_nan = std::isnan(b.value);
  if (a_nan != b_nan) return largest ? a_nan : b_nan;
  if (!a_nan && a.value != b.value) return largest ? a.value > b.value : a.value < b.value;
  return a.index < b.index;
}

/// A launch's work: `items` pieces of source rows, each reduced to its best `k` (fewer when it holds fewer),
/// written at item * pitch of the destination (slots past its count get index -1).
struct TopKPass {
  std::uint64_t k = 1;
  bool largest = true;
  DevicePtr<const f16> values;   ///< source values, rows of `row` elements, 1-D layout of values_units units
  DevicePtr<const f16> indices;  ///< source indices (int32) of the same shape, or null: indices are positions
  std::size_t values_units = 0, indices_units = 0;
  std::uint64_t row = 1;       ///< source elements per row
  std::uint64_t parts = 1;     ///< items per source row
  std::uint64_t part_len = 1;  ///< source elements per item (the last of a row may be shorter)
  std::uint64_t items = 0;     ///< rows * parts
  DevicePtr<f16> out_values;   ///< destination, `pitch` slots per item
  DevicePtr<f16> out_indices;  ///< int32, `pitch` slots per item
  std::size_t out_values_units = 0;
  std::uint64_t pitch = 1;
};

/// This core's items: runs of whole units (two items when an item's slots are odd, so every put starts on a word).
tiling::Range my_items(const Core& core, std::uint64_t items, std::uint64_t pitch) {
  const std::size_t unit = pitch % 2 == 0 ? 1 : 2;
  const std::size_t units = static_cast<std::size_t>((items + unit - 1) / unit);
  const std::size_t workers = std::min(tiling::worker_count(core), units), me = tiling::worker_index(core);
  if (me >= workers) return {};
  const std::size_t base = units / workers, extra = units % workers;
  const std::size_t first = me * base + std::min(me, extra), count = base + (me < extra ? 1 : 0);
  const auto total = static_cast<std::size_t>(items);
  return {std::min(total, first * unit), std::min(total, (first + count) * unit)};
}

/// ldm bytes a pass with `k` candidates needs at most: its out buffers (at most max(2k, 1024) slots of a value and
/// an index), the candidate pool (k entries and a tile of newcomers), input tiles of at least 64 and the
/// allocations' rounding.
std::uint64_t ldm_bytes_for(std::uint64_t k) {
  const std::uint64_t out_slots = 1024 + 2 * k, units = 3 * out_slots + 3 * k + 8 + 6 * 64;
  return 2 * units + 1024;
}

void write_word(f16* units, std::size_t i, std::int32_t v) {
  const auto u = static_cast<std::uint32_t>(v);
  units[2 * i] = f16::from_bits(static_cast<std::uint16_t>(u & 0xffffu));
  units[2 * i + 1] = f16::from_bits(static_cast<std::uint16_t>(u >> 16));
}

void top_k_kernel(Core& core, const TopKPass& a) {
  const tiling::Range mine = my_items(core, a.items, a.pitch);
  if (mine.empty()) return;
  const std::size_t unit = a.pitch % 2 == 0 ? 1 : 2;
  const auto pitch = static_cast<std::size_t>(a.pitch);
  // Items per put: about 1024 slots, whole units.
  const std::size_t batch = std::max(unit, std::min(mine.size(), std::max<std::size_t>(1, 1024 / pitch)) / unit * unit);
  LdmSpan<f16> out_v = core.ldm().alloc<f16>(batch * pitch + 2);
  LdmSpan<f16> out_i = core.ldm().alloc<f16>(2 * batch * pitch);
  // The candidate pool: k kept entries (a value and an index each) and a tile of newcomers.
  [[maybe_unused]] LdmSpan<f16> pool_k = core.ldm().alloc<f16>(static_cast<std::size_t>(3 * a.k) + 2);
  const bool merge = static_cast<bool>(a.indices);
  const std::size_t tile = tiling::fit_elements(core, merge ? 6 : 4, 4096, 64);
  [[maybe_unused]] LdmSpan<f16> pool_tile = core.ldm().alloc<f16>(3 * tile);
  LdmSpan<f16> in_v = core.ldm().alloc<f16>(tile + 2);
  LdmSpan<f16> in_i = merge ? core.ldm().alloc<f16>(2 * tile + 2) : LdmSpan<f16>{};

  std::vector<Candidate> pool;
  pool.reserve(static_cast<std::size_t>(a.k) + tile);
  const auto better = [&](const Candidate& x, const Candidate& y) { return ranks_before(x, y, a.largest); };
  std::size_t batch_first = mine.begin, in_batch = 0;
  const auto flush = [&](std::size_t end_item) {
    if (in_batch == 0) return;
    std::size_t begin = batch_first * pitch, end = end_item * pitch;
    if (end % 2 == 1 && end < a.out_values_units) out_v[end - begin] = f16(0.0f), ++end;  // the layout's pad
    const DmaHandle hv = tiling::put_range(core, a.out_values, out_v, tiling::Range{begin, end});
    const DmaHandle hi =
        tiling::put_range(core, a.out_indices, out_i, tiling::Range{2 * batch_first * pitch, 2 * end_item * pitch});
    core.wait(hv);
    core.wait(hi);
    batch_first = end_item, in_batch = 0;
  };
  for (std::size_t item = mine.begin; item < mine.end; ++item) {
    const std::uint64_t row = item / a.parts, part = item % a.parts;
    const std::uint64_t first = part * a.part_len, last = std::min(a.row, first + a.part_len);
    pool.clear();
    std::uint64_t compared = 0;
    for (std::uint64_t at = first; at < last; at += tile) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(tile, last - at));
      const std::size_t e0 = static_cast<std::size_t>(row * a.row + at);
      const tiling::RangeRead rv = tiling::get_range(core, in_v, a.values, a.values_units, tiling::Range{e0, e0 + n});
      tiling::RangeRead ri{};
      if (merge) ri = tiling::get_range(core, in_i, a.indices, a.indices_units, tiling::Range{2 * e0, 2 * (e0 + n)});
      core.wait(rv.handle);
      if (merge) core.wait(ri.handle);
      const std::span<const f16> vs(in_v.data() + rv.first, n);
      for (std::size_t j = 0; j < n; ++j) {
        std::int32_t index = static_cast<std::int32_t>(at + j);
        if (merge) {
          index = static_cast<std::int32_t>(
              element_value(std::span<const f16>(in_i.data() + ri.first, 2 * n), DType::kI32, j));
          if (index < 0) continue;  // an empty slot of a part with fewer candidates than its pitch
        }
        pool.push_back({static_cast<float>(vs[j]), index});
      }
      compared += n;
      if (pool.size() > a.k) {
        std::nth_element(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(a.k), pool.end(), better);
        pool.resize(static_cast<std::size_t>(a.k));
      }
    }
    std::sort(pool.begin(), pool.end(), better);
    const std::size_t depth = static_cast<std::size_t>(std::log2(static_cast<double>(a.k) + 1.0)) + 1;
    core.compute({.flops = compared * depth + pool.size() * depth});
    const std::size_t slot0 = (item - batch_first) * pitch;
    for (std::size_t s = 0; s < pitch; ++s) {
      const bool held = s < pool.size();
      out_v[slot0 + s] = held ? f16(pool[s].value) : f16(0.0f);
      write_word(out_i.data(), slot0 + s, held ? pool[s].index : -1);
    }
    ++in_batch;
    if (in_batch == batch) flush(item + 1);
  }
  flush(mine.end);
}

class TopKOp final : public BoundOp {
 public:
  TopKOp(Shape x, Shape y, std::uint64_t k, bool largest) : BoundOp({x}, {y, y}), k_(k), largest_(largest) {
    set_dtypes({DType::kF16, DType::kF16, DType::kI32});
  }
  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }

  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    const Shape& xs = input_shapes()[0];
    const Shape& ys = output_shapes()[0];
    const std::uint64_t length = xs[xs.rank() - 1], rows = xs.elements() / length;
    // The pool, the out buffers and tiles of at least 64 must fit every core's local store.
    if (ldm_bytes_for(k_) > m.arch().ldm_bytes) {
      // The need grows by a fixed amount per candidate: the largest k that fits, for the message.
      const std::uint64_t base = ldm_bytes_for(0), per_k = ldm_bytes_for(1) - base, ldm = m.arch().ldm_bytes;
      const std::uint64_t most = ldm > base ? (ldm - base) / per_k : 0;
      reject(label, fmt::format("k = {} needs {} bytes of local store per core for its candidates, more than the "
                                "{} bytes of {}'s: take fewer ({} at most)",
                                k_, ldm_bytes_for(k_), m.arch().ldm_bytes, m.arch().name, most));
    }
    DeviceScratch scratch(m);
    // The kernel reads and writes elements in order: tensors staged with padding inside (naive staging) are copied
    // into their 1-D layouts first (the input) or after (the outputs).
    const auto flat = [&](const Shape& s, DType type) { return plan_one_d(unit_view(s, type)); };
    const auto view_of = [](const Shape& s, DType type) {
      return units_of(type) > 1 ? broadcast_view(s, s).widened(units_of(type)) : broadcast_view(s, s);
    };
    DeviceTensor x = in[0];
    if (!in[0].layout().only_tail_padded()) {
      const PaddingPlan plan = flat(xs, DType::kF16);
      x = scratch.tensor(label + ":flat_input", plan);
      run_view_copy(m, label + ":flat", view_of(xs, DType::kF16), DevicePtr<const f16>(in[0].ptr), in[0].layout(),
                    x.ptr, plan.layout);
    }
    std::array<DeviceTensor, 2> y{out[0], out[1]};
    const std::array<DType, 2> types{DType::kF16, DType::kI32};
    for (std::size_t o = 0; o < 2; ++o) {
      if (!out[o].layout().only_tail_padded())
        y[o] = scratch.tensor(fmt::format("{}:flat_output{}", label, o), flat(ys, types[o]));
    }
    // Rows fewer than cores: long rows cut into parts of at least max(2k, 2048) elements, one core each.
    const std::uint64_t workers = std::uint64_t{m.arch().core_groups} * m.arch().cores_per_group();
    const std::uint64_t most_parts = std::max<std::uint64_t>(1, length / std::max<std::uint64_t>(2 * k_, 2048));
    const std::uint64_t parts = rows >= workers ? 1 : std::clamp<std::uint64_t>(workers / rows, 1, most_parts);
    TopKPass first{k_, largest_, DevicePtr<const f16>(x.ptr), {}, x.layout().total, 0, length, 1, length, rows};
    if (parts > 1) {
      const std::uint64_t part_len = (length + parts - 1) / parts;
      const std::uint64_t cuts = (length + part_len - 1) / part_len;
      const std::uint64_t pitch = tiling::ceil_even(static_cast<std::size_t>(std::min(k_, part_len)));
      const std::size_t slots = static_cast<std::size_t>(rows * cuts * pitch);
      const DevicePtr<f16> cand_v = scratch.alloc<f16>(slots), cand_i = scratch.alloc<f16>(2 * slots);
      first.parts = cuts, first.part_len = part_len, first.items = rows * cuts;
      first.out_values = cand_v, first.out_indices = cand_i, first.out_values_units = slots, first.pitch = pitch;
      launch_all(m, label + ":parts", top_k_kernel, first);
      const std::uint64_t row = cuts * pitch;
      TopKPass second{
          k_,  largest_, DevicePtr<const f16>(cand_v), DevicePtr<const f16>(cand_i), slots, 2 * slots, row, 1,
          row, rows};
      second.out_values = y[0].ptr, second.out_indices = y[1].ptr, second.out_values_units = y[0].layout().total;
      second.pitch = k_;
      launch_all(m, label, top_k_kernel, second);
    } else {
      first.out_values = y[0].ptr, first.out_indices = y[1].ptr, first.out_values_units = y[0].layout().total;
      first.pitch = k_;
      launch_all(m, label, top_k_kernel, first);
    }
    for (std::size_t o = 0; o < 2; ++o) {
      if (out[o].layout().only_tail_padded()) continue;
      run_view_copy(m, fmt::format("{}:unflat{}", label, o), view_of(ys, types[o]), DevicePtr<const f16>(y[o].ptr),
                    flat(ys, types[o]).layout, out[o].ptr, out[o].layout());
    }
  }

  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    const Shape& xs = input_shapes()[0];
    const Shape& ys = output_shapes()[0];
    const std::uint64_t length = xs[xs.rank() - 1], rows = xs.elements() / length;
    HostTensor values{ys, std::vector<float>(ys.elements())}, indices{ys, std::vector<float>(ys.elements())};
    std::vector<std::uint64_t> order(length);
    for (std::uint64_t r = 0; r < rows; ++r) {
      const float* row = in[0].data.data() + r * length;
      for (std::uint64_t j = 0; j < length; ++j) order[j] = j;
      // A stable sort by value keeps equal values in index order; NaN counts beyond every number.
      std::stable_sort(order.begin(), order.end(), [&](std::uint64_t p, std::uint64_t q) {
        const bool p_nan = std::isnan(row[p]), q_nan = std::isnan(row[q]);
        if (p_nan || q_nan) return largest_ ? (p_nan && !q_nan) : (!p_nan && q_nan);
        return largest_ ? row[p] > row[q] : row[p] < row[q];
      });
      for (std::uint64_t j = 0; j < k_; ++j) {
        values.data[r * k_ + j] = row[order[j]];
        indices.data[r * k_ + j] = static_cast<float>(order[j]);
      }
    }
    return {values, indices};
  }
  OpCost cost() const override { return {input_shapes()[0].elements(), 0}; }
  Tolerance tolerance() const override { return {0.0, 0.0}; }

 private:
  std::uint64_t k_;
  bool largest_;
};

class TopKKind final : public OperatorKind {
 public:
  std::string_view name() const override { return "top_k"; }
  Arity arity() const override { return Arity{1, 1, 2}; }
  std::unique_ptr<BoundOp> bind(const JsonField& attrs, std::span<const Shape> inputs) const override {
    const std::vector<DType> types(inputs.size(), DType::kF16);
    return bind_typed(attrs, inputs, types);
  }
  std::unique_ptr<BoundOp> bind_typed(const JsonField& attrs, std::span<const Shape> in,
                                      std::span<const DType> types) const override {
    check_attrs(attrs, {"k", "largest", "sorted"});
    if (types[0] != DType::kF16) reject(name(), fmt::format("input 0 is {}, expected f16", to_string(types[0])));
    const Shape& x = in[0];
    if (x.rank() == 0) reject(name(), "the input needs at least one axis (top_k runs along the last)");
    const std::uint64_t length = x[x.rank() - 1];
    if (!attrs.has("k")) reject(name(), "needs attribute 'k' (how many elements to keep per row)");
    const auto k = static_cast<std::uint64_t>(int_attr(attrs, "k", 1, 1));
    if (k > length) reject(name(), fmt::format("k = {} is more than the last axis' {} elements", k, length));
    if (length > (std::uint64_t{1} << 31)) {
      reject(name(), fmt::format("the last axis' {} elements do not fit int32 indices", length));
    }
    const bool largest = int_attr(attrs, "largest", 1, 0, 1) == 1;
    int_attr(attrs, "sorted", 1, 0, 1);  // checked; the output is always sorted, which sorted 0 allows
    std::vector<std::uint64_t> dims(x.dims().begin(), x.dims().end());
    dims.back() = k;
    return std::make_unique<TopKOp>(x, Shape(dims), k, largest);
  }
};

}  // namespace

void add_top_k_kind(OperatorRegistry& registry) {
  registry.add(std::make_unique<TopKKind>());
}

}  // namespace ldmsim::ops
