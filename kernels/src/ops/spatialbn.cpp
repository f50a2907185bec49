// Batch normalization over NCHW. spatialbn (inference: scale, bias, mean, var, epsilon): x and y 2-D class
// (planes), the [C] tensors 1-D. spatialbn_train (scale, bias -> y, saved_mean, saved_inv_std): x and y 3-D
// class, [C] tensors 1-D; biased variance over n*h*w.
// Applying the affine map: destination tiles of y over every core (>= 4 KiB each); a tile gathers its x elements
// and the parameters of the channels it touches (a cyclic channel range), so any plane size works.
// Training statistics: each core owns an even-bounded range of channels and reads each of their planes in
// chunks with exact plane-aligned requests (the 3-D class is what makes those legal); one core per channel
// keeps the reduction order fixed. The statistics are written, then a second launch applies them.
#include <algorithm>
#include <cmath>
#include <optional>

#include "ldmsim/dma/timing_model.hpp"
#include "ldmsim/kernels/constant_pack.hpp"
#include "ldmsim/kernels/streaming.hpp"
#include "op_support.hpp"
#include "ops.hpp"

namespace ldmsim::ops {

namespace {

/// How the apply kernel turns its third and fourth [C] inputs into 1 / std: var (+ epsilon), or given.
enum class Spread : std::uint8_t { kVariance, kInvStd };

struct ApplyArgs {
  DevicePtr<const f16> x;
  Layout xl;
  std::array<DevicePtr<const f16>, 4> params;  // scale, bias, mean, var or inv_std
  std::array<Layout, 4> pl;
  Spread spread = Spread::kVariance;
  float eps = 1e-5f;
  DevicePtr<f16> y;
  Layout yl;
  packing::StagedPacks packs;  ///< constant packs of the four parameters (apply_packed_kernel)
  std::size_t tile = 0;        ///< apply_packed_kernel's dealt tile, planned with its packs
};

/// Per-channel coefficients y = x * scale[c] + shift[c], computed from the four [C] inputs.
struct Coefficients {
  std::vector<float> scale, shift;
};

/// scale, bias, mean and var (or inv_std) of `count` channels folded into y = x * scale' + shift'.
Coefficients fold(const ApplyArgs& a, const std::array<std::vector<float>, 4>& prm, std::size_t count) {
  Coefficients co{std::vector<float>(count), std::vector<float>(count)};
  for (std::size_t i = 0; i < count; ++i) {
    const float inv = a.spread == Spread::kVariance ? 1.0f / std::sqrt(prm[3][i] + a.eps) : prm[3][i];
    co.scale[i] = prm[0][i] * inv;
    co.shift[i] = prm[1][i] - prm[2][i] * co.scale[i];
  }
  return co;
}

/// Reads channels [c0, c0 + count) mod C of the four parameters through `staging` into `pb` (ldm) and folds them.
Coefficients read_coefficients(Core& core, const ApplyArgs& a, std::size_t c0, std::size_t count, LdmSpan<f16> staging,
                               LdmSpan<f16> pb) {
  const std::size_t C = a.xl.shape.c, head = std::min(count, C - c0);
  std::array<std::vector<float>, 4> prm;
  for (std::size_t k = 0; k < 4; ++k) {
    tiling::gather(core, staging, a.params[k], a.pl[k], c0, head, pb.data());
    tiling::gather(core, staging, a.params[k], a.pl[k], 0, count - head, pb.data() + head);
    prm[k].resize(count);
    to_floats(pb, 0, count, prm[k].data());
  }
  return fold(a, prm, count);
}

/// The four [C] buffers, read at once (one DMA latency, not four) and still in flight.
struct CoefficientReads {
  std::array<LdmSpan<f16>, 4> bufs;
  std::array<tiling::RangeRead, 4> reads;
};

/// ldm bytes the four [C] buffers take while they are read.
std::size_t coefficient_bytes(const ApplyArgs& a) {
  std::size_t bytes = 0;
  for (const Layout& l : a.pl) bytes += (l.total + 2) * sizeof(f16) + 64;  // 64: alignment slack per buffer
  return bytes;
}

CoefficientReads issue_coefficient_reads(Core& core, const ApplyArgs& a) {
  CoefficientReads r;
  for (std::size_t k = 0; k < 4; ++k) {
    r.bufs[k] = core.ldm().alloc<f16>(a.pl[k].total + 2);
    r.reads[k] = tiling::get_range(core, r.bufs[k], a.params[k], a.pl[k].total, {0, a.pl[k].total});
  }
  return r;
}

/// Waits for the reads, frees their buffers and folds all C channels' coefficients.
Coefficients finish_coefficient_reads(Core& core, const ApplyArgs& a, CoefficientReads& r) {
  const std::size_t C = a.xl.shape.c;
  std::array<std::vector<float>, 4> prm;
  for (std::size_t k = 0; k < 4; ++k) {
    r.reads[k].handle.wait();
    std::vector<float> padded(a.pl[k].total);
    to_floats(r.bufs[k], r.reads[k].first, padded.size(), padded.data());
    prm[k].resize(C);
    for_each_run(a.pl[k], 0, C, [&](std::size_t l, std::size_t offset, std::size_t n) {
      std::copy_n(padded.begin() + static_cast<std::ptrdiff_t>(offset), n,
                  prm[k].begin() + static_cast<std::ptrdiff_t>(l));
    });
  }
  for (std::size_t k = 4; k-- > 0;) core.ldm().free(r.bufs[k]);
  return fold(a, prm, C);
}

/// The common case, x and y placed alike and the [C] parameters small: every core reads all coefficients once,
/// while its first x tile is in flight, and streams x through dealt tiles (stream_dealt_tiles), like an
/// element-wise kernel.
void apply_streaming_kernel(Core& core, const ApplyArgs& a) {
  const std::size_t C = a.xl.shape.c, hw = a.xl.shape.hw();
  const std::size_t max_tile = tiling::fit_elements(core, 4, tiling::kDealtTile, coefficient_bytes(a));
  if (tiling::worker_index(core) * tiling::floor_even(max_tile) >= a.yl.total) return;  // no tile for me
  CoefficientReads pending = issue_coefficient_reads(core, a);
  std::optional<Coefficients> co;
  const DevicePtr<const f16> inputs[] = {a.x};
  tiling::stream_dealt_tiles(core, inputs, a.y, a.yl.total, max_tile,
                             [&](tiling::Range t, std::span<const std::span<const float>> xs, std::span<float> ys) {
                               if (!co) co = finish_coefficient_reads(core, a, pending);
                               std::fill(ys.begin(), ys.end(), 0.0f);
                               const std::size_t first = a.yl.logical_at_or_after(t.begin);
                               const std::size_t last = a.yl.logical_at_or_after(t.end);
                               for_each_run(a.yl, first, last, [&](std::size_t l, std::size_t offset, std::size_t n) {
                                 std::size_t plane = l / hw, pos = l % hw;
                                 for (std::size_t i = 0; i < n; ++i, ++pos) {
                                   if (pos == hw) pos = 0, ++plane;
                                   const std::size_t c = plane % C, at = offset - t.begin + i;
                                   ys[at] = xs[0][at] * co->scale[c] + co->shift[c];
                                 }
                               });
                               core.compute({.flops = 2 * (last - first)});
                             });
}

/// The channels [c0, c0 + count) mod C of the four parameters, from a core's constant pack.
Coefficients pack_coefficients(const ApplyArgs& a, const packing::PackView& pack, std::size_t& c0) {
  const std::size_t C = a.xl.shape.c;
  std::array<std::vector<float>, 4> prm;
  std::size_t count = 0;
  for (std::uint32_t k = 0; k < 4; ++k) {
    const std::size_t index = pack.find(k + 1);
    const packing::PackEntry* entry = &pack.entries()[index];
    if (k == 0) c0 = entry->begin, count = entry->count;
    if (entry->begin != c0 || entry->count != count || count > C) {
      throw packing::PackError(
          fmt::format("spatialbn: pack entry of input {} holds channels {}+{}, input 1's {}+{} of {}", k + 1,
                      entry->begin, entry->count, c0, count, C));
    }
    const auto values = pack.values(index);
    prm[k].resize(count);
    for (std::size_t i = 0; i < count; ++i) prm[k][i] = static_cast<float>(values[i]);
  }
  return fold(a, prm, count);
}

/// apply_streaming_kernel with the parameters from the core's constant pack (one DMA) instead of four reads:
/// the pack holds the cyclic channel range this core's dealt tiles touch (SpatialBnOp::pack_plan).
void apply_packed_kernel(Core& core, const ApplyArgs& a) {
  const std::size_t C = a.xl.shape.c, hw = a.xl.shape.hw();
  if (tiling::worker_index(core) * tiling::floor_even(a.tile) >= a.yl.total) return;  // no tile for me
  const LdmSpan<f16> buffer = packing::alloc_pack_buffer(core, a.packs);
  const packing::PackFetch fetch = packing::fetch_pack(core, a.packs, buffer);
  std::optional<Coefficients> co;
  std::size_t c0 = 0;
  const DevicePtr<const f16> inputs[] = {a.x};
  tiling::stream_dealt_tiles(
      core, inputs, a.y, a.yl.total, a.tile,
      [&](tiling::Range t, std::span<const std::span<const float>> xs, std::span<float> ys) {
        const std::size_t first = a.yl.logical_at_or_after(t.begin);
        const std::size_t last = a.yl.logical_at_or_after(t.end);
        fetch.handle.wait();  // as the unpacked kernel waits for its reads at its first tile
        // A core whose tiles hold only padding has no pack (pack_plan): it writes zeros.
        if (!co && first < last) co = pack_coefficients(a, packing::PackView::parse(fetch.data(buffer)), c0);
        std::fill(ys.begin(), ys.end(), 0.0f);
        for_each_run(a.yl, first, last, [&](std::size_t l, std::size_t offset, std::size_t n) {
          std::size_t plane = l / hw, pos = l % hw;
          for (std::size_t i = 0; i < n; ++i, ++pos) {
            if (pos == hw) pos = 0, ++plane;
            const std::size_t slot = (plane % C + C - c0) % C, at = offset - t.begin + i;
            if (slot >= co->scale.size()) {
              throw packing::PackError(fmt::format("spatialbn: channel {} is not in this core's pack", plane % C));
            }
            ys[at] = xs[0][at] * co->scale[slot] + co->shift[slot];
          }
        });
        core.compute({.flops = 2 * (last - first)});
      });
}

/// The dealt tile of apply_streaming_kernel on a local store of `ldm_bytes` (it reserves the four parameters).
std::size_t streaming_tile(std::uint64_t ldm_bytes, const ApplyArgs& a) {
  return tiling::fit_elements_in(ldm_bytes, coefficient_bytes(a), 4, tiling::kDealtTile);
}

/// The cyclic range [c0, c0 + count) mod C covering the channels a worker's dealt tiles touch (count 0: none).
std::pair<std::size_t, std::size_t> touched_channels(const ApplyArgs& a, std::size_t worker, std::size_t workers,
                                                     std::size_t tile) {
  const std::size_t C = a.xl.shape.c, hw = a.xl.shape.hw();
  std::vector<bool> touched(C, false);
  std::size_t marked = 0;
  tile = std::max<std::size_t>(2, tiling::floor_even(tile));
  for (std::size_t at = worker * tile; at < a.yl.total && marked < C; at += workers * tile) {
    const std::size_t first = a.yl.logical_at_or_after(at);
    const std::size_t last = a.yl.logical_at_or_after(std::min(a.yl.total, at + tile));
    if (first >= last) continue;
    const std::size_t planes = (last - 1) / hw - first / hw + 1;
    for (std::size_t p = 0; p < std::min(planes, C); ++p) {
      const std::size_t c = (first / hw + p) % C;
      if (!touched[c]) touched[c] = true, ++marked;
    }
  }
  if (marked == 0) return {0, 0};
  if (marked == C) return {0, C};
  // The complement of the longest cyclic run of untouched channels.
  std::size_t best_gap = 0, best_end = 0;
  for (std::size_t start = 0; start < C; ++start) {
    if (touched[start] || !touched[(start + C - 1) % C]) continue;  // a gap starts after a touched channel
    std::size_t length = 0;
    while (!touched[(start + length) % C]) ++length;
    if (length > best_gap) best_gap = length, best_end = (start + length) % C;
  }
  return {best_end, C - best_gap};
}

/// Whether the packs of `plan` get the cores started sooner than the four parameter reads: the cycles until every
/// core has its parameters and its first tile, with the group's requests scheduled by the arch's own DMA timing
/// model (each core issues its parameter reads, then its tile). One pack saves
/// three requests' overheads per core and may hold fewer channels than all four vectors, but it is one request on
/// one channel where the four ran on four: with a core or two and a pack as large as the vectors, the pack only
/// serialises what was parallel ([2, 1024, 1, 1] on a sw26010pro group, one core: 3856 cycles unpacked, 7375
/// packed), while with few channels free for the tiles ([1, 2048, 7, 7]: 2 cores, 8 channels) it lets the tiles
/// start at once.
bool packs_pay(const Arch& arch, const ApplyArgs& a, const packing::PackPlan& plan, std::size_t tile) {
  const auto finish = [&](bool packed) {
    const std::unique_ptr<TimingModel> engine = make_timing_model(arch);  // an idle engine per way
    std::vector<Cycle> clock(plan.cores.size(), 0), ready(plan.cores.size(), 0);
    const auto read = [&](std::size_t w, std::size_t bytes) {  // a contiguous get by worker w, aligned
      DmaRequest r;
      r.main = DeviceAddr{1} << 20;
      r.length = (bytes + 3) / 4 * 4;
      clock[w] += engine->issue_cycles(r);
      ready[w] = std::max(ready[w], engine->schedule(r, clock[w], static_cast<int>(w)).end);
    };
    for (std::size_t step = 0; step < (packed ? 1u : 4u); ++step) {  // the parameter reads, core by core
      for (std::size_t w = 0; w < plan.cores.size(); ++w) {
        if (!plan.cores[w].empty())
          read(w, packed ? packing::build_size(plan.cores[w]) : a.pl[step].total * sizeof(f16));
      }
    }
    Cycle last = 0;
    for (std::size_t w = 0; w < plan.cores.size(); ++w) {  // then each core's first tile
      if (plan.cores[w].empty()) continue;
      read(w, std::min(tile, a.yl.total - std::min(a.yl.total, w * tile)) * sizeof(f16));
      last = std::max(last, ready[w]);
    }
    return last;
  };
  return finish(true) <= finish(false);
}

/// The general case: destination tiles that gather their x elements and their channels' parameters.
void apply_gather_kernel(Core& core, const ApplyArgs& a) {
  const tiling::Range share = tiling::my_share(core, a.yl.total, tiling::kStreamingShare);
  if (share.empty()) return;
  const std::size_t C = a.xl.shape.c, hw = a.xl.shape.hw();
  const std::size_t tile = std::min(tiling::fit_elements(core, 8), tiling::ceil_even(share.size()));
  auto staging = core.ldm().alloc<f16>(2 * tile + 2);
  // The tile in ldm as the core computes on it; the host converts it from where the reads put it.
  [[maybe_unused]] const auto xb = core.ldm().alloc<f16>(tile);
  auto yb = core.ldm().alloc<f16>(tile);
  auto pb = core.ldm().alloc<f16>(tile + 2);
  std::vector<float> xs(tile), ys(tile);
  tiling::for_each_tile(share, tile, [&](tiling::Range t) {
    std::fill(ys.begin(), ys.begin() + static_cast<std::ptrdiff_t>(t.size()), 0.0f);
    const std::size_t first = a.yl.logical_at_or_after(t.begin), last = a.yl.logical_at_or_after(t.end);
    if (first < last) {
      // The channels of this tile: a cyclic range [c0, c0 + count) mod C, count <= tile + 2.
      const std::size_t c0 = (first / hw) % C;
      const std::size_t count = std::min(C, (last - 1) / hw - first / hw + 1);
      const Coefficients co = read_coefficients(core, a, c0, count, staging, pb);
      gather_floats(core, staging, a.x, a.xl, first, last - first, xs.data());
      for_each_run(a.yl, first, last, [&](std::size_t l, std::size_t offset, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
          const std::size_t c = ((l + i) / hw) % C, slot = (c + C - c0) % C;
          ys[offset - t.begin + i] = xs[l + i - first] * co.scale[slot] + co.shift[slot];
        }
      });
      core.compute({.flops = 2 * (last - first)});
    }
    to_halves(ys.data(), t.size(), yb);
    tiling::put_range(core, a.y, yb, t).wait();
  });
}

struct StatsArgs {
  DevicePtr<const f16> x;
  Layout xl;
  float eps = 1e-5f;
  DevicePtr<f16> mean, inv_std;
  Layout ol;
};

void stats_kernel(Core& core, const StatsArgs& a) {
  const tiling::Range share = tiling::my_share(core, a.ol.total);
  if (share.empty()) return;
  const std::size_t C = a.xl.shape.c, hw = a.xl.shape.hw(), N = a.xl.shape.n;
  const std::size_t chunk = tiling::fit_elements(core, 2);
  auto xb = core.ldm().alloc<f16>(chunk);
  auto ob = core.ldm().alloc<f16>(tiling::ceil_even(share.size()));
  auto ib = core.ldm().alloc<f16>(tiling::ceil_even(share.size()));
  std::vector<float> xs(chunk);
  for (std::size_t c = share.begin; c < share.end; ++c) {
    double sum = 0, sq = 0;
    for (std::size_t n = 0; c < C && n < N; ++n) {
      // The plane's requests start at its pitch-aligned offset and end at an even element, clipped to the pitch.
      const std::size_t plane = (n * C + c) * hw, off = a.xl.offset(n, c, 0, 0);
      const std::size_t span = std::min(a.xl.hw_pitch, tiling::ceil_even(a.xl.offset_of(plane + hw - 1) + 1 - off));
      for (std::size_t at = 0; at < span; at += chunk) {
        const std::size_t len = std::min(chunk, span - at);
        core.get(xb.first(len), a.x + off + at).wait();
        to_floats(xb, 0, len, xs.data());
        for_each_run(a.xl, plane, plane + hw, [&](std::size_t, std::size_t offset, std::size_t k) {
          const std::size_t lo = std::max(offset, off + at), hi = std::min(offset + k, off + at + len);
          for (std::size_t o = lo; o < hi; ++o) {
            const double v = xs[o - off - at];
            sum += v;
            sq += v * v;
          }
        });
        core.compute({.flops = 3 * len});
      }
    }
    const double count = static_cast<double>(N * hw), mu = sum / count;
    const double var = std::max(0.0, sq / count - mu * mu);
    ob[c - share.begin] = f16(c < C ? static_cast<float>(mu) : 0.0f);
    ib[c - share.begin] = f16(c < C ? static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(a.eps))) : 0.0f);
  }
  auto h1 = tiling::put_range(core, a.mean, ob, share);
  auto h2 = tiling::put_range(core, a.inv_std, ib, share);
  h1.wait();
  h2.wait();
}

class SpatialBnOp final : public BoundOp {
 public:
  SpatialBnOp(std::vector<Shape> in, std::vector<Shape> out, float eps, bool train)
      : BoundOp(std::move(in), std::move(out)), eps_(eps), train_(train) {}

  InputRole input_role(std::size_t i) const override { return i == 0 ? InputRole::kData : InputRole::kParameter; }
  PaddingSpec padding(std::size_t i) const override {
    const bool is_x_or_y = i == 0 || i == input_shapes().size();
    if (!is_x_or_y) return PaddingSpec{PaddingClass::kOneD};
    return train_ ? PaddingSpec{PaddingClass::kThreeD} : PaddingSpec{PaddingClass::kTwoD, Unit::kPlane, Unit::kPlane};
  }

  std::optional<packing::PackPlan> pack_plan(const Arch& arch, std::span<const DeviceTensor> in,
                                             std::span<const DeviceTensor> out,
                                             const std::vector<bool>& constant) const override {
    if (train_ || constant.size() < 5 ||
        !std::all_of(constant.begin() + 1, constant.begin() + 5, [](bool c) { return c; }))
      return std::nullopt;
    const ApplyArgs a = inference_args(in, out);
    if (!streams(a, arch.ldm_bytes)) return std::nullopt;
    const std::size_t tile = streaming_tile(arch.ldm_bytes, a), workers = arch.total_cores();
    packing::PackPlan plan;
    plan.cores.resize(workers);
    std::size_t packed = 0;
    for (std::size_t w = 0; w < workers; ++w) {
      const auto [c0, count] = touched_channels(a, w, workers, tile);
      if (count == 0) continue;
      for (std::uint32_t k = 1; k <= 4; ++k) {
        plan.cores[w].push_back({k, static_cast<std::uint32_t>(c0), static_cast<std::uint32_t>(count)});
      }
      ++packed;
    }
    if (packed == 0 || !packs_pay(arch, a, plan, tile)) return std::nullopt;
    return plan;
  }

  void run_packed(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
                  const std::string& label, const packing::StagedPacks& packs) const override {
    ApplyArgs a = inference_args(in, out);
    if (train_ || packs.empty() || !streams(a, m.arch().ldm_bytes)) return run(m, in, out, label);
    a.packs = packs;
    a.tile = streaming_tile(m.arch().ldm_bytes, a);
    launch_all(m, label, apply_packed_kernel, a);
  }

  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    ApplyArgs apply = inference_args(in, out);
    if (train_) {
      launch_all(m, label, stats_kernel, StatsArgs{apply.x, apply.xl, eps_, out[1].ptr, out[2].ptr, out[1].layout()});
      apply.spread = Spread::kInvStd;
      apply.params = {DevicePtr<const f16>(in[1].ptr), DevicePtr<const f16>(in[2].ptr),
                      DevicePtr<const f16>(out[1].ptr), DevicePtr<const f16>(out[2].ptr)};
      apply.pl = {in[1].layout(), in[2].layout(), out[1].layout(), out[2].layout()};
    }
    if (streams(apply, m.arch().ldm_bytes)) {
      launch_all(m, label, apply_streaming_kernel, apply);
    } else {
      launch_all(m, label, apply_gather_kernel, apply);
    }
  }

  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    const Shape& s = input_shapes()[0];
    const std::size_t N = s[0], C = s[1], hw = s.product(2, s.rank());
    HostTensor y = in[0];
    std::vector<double> mean(C), inv(C);
    for (std::size_t c = 0; c < C; ++c) {
      if (train_) {
        double sum = 0, sq = 0;
        for (std::size_t n = 0; n < N; ++n) {
          for (std::size_t i = 0; i < hw; ++i) {
            const double v = in[0].data[(n * C + c) * hw + i];
            sum += v;
            sq += v * v;
          }
        }
        const double cnt = static_cast<double>(N * hw);
        mean[c] = sum / cnt;
        inv[c] = 1.0 / std::sqrt(std::max(0.0, sq / cnt - mean[c] * mean[c]) + eps_);
      } else {
        mean[c] = in[3].data[c];
        inv[c] = 1.0 / std::sqrt(static_cast<double>(in[4].data[c]) + eps_);
      }
    }
    for (std::size_t i = 0; i < y.data.size(); ++i) {
      const std::size_t c = (i / hw) % C;
      y.data[i] = static_cast<float>((y.data[i] - mean[c]) * inv[c] * in[1].data[c] + in[2].data[c]);
    }
    if (!train_) return {y};
    HostTensor m{Shape{C}, {}}, v{Shape{C}, {}};
    for (std::size_t c = 0; c < C; ++c) {
      m.data.push_back(static_cast<float>(mean[c]));
      v.data.push_back(static_cast<float>(inv[c]));
    }
    return {y, m, v};
  }

  OpCost cost() const override {
    const Shape& s = input_shapes()[0];
    return {(train_ ? 5 : 2) * s.elements() + 4 * s[1], 0};
  }
  Tolerance tolerance() const override { return train_ ? Tolerance{8e-3, 1.0 / 256} : Tolerance{4e-3, 1.0 / 256}; }
  FusionForm fusion_form() const override {
    if (train_) return {};  // three outputs and statistics over the batch: not fused
    return {.kind = FusionForm::Kind::kBatchNorm, .epsilon = eps_};
  }

 private:
  /// The apply kernel's arguments with the parameters of inference (inputs 1..4; training replaces the last two).
  ApplyArgs inference_args(std::span<const DeviceTensor> in, std::span<const DeviceTensor> out) const {
    ApplyArgs a{
        DevicePtr<const f16>(in[0].ptr), in[0].layout(), {}, {}, Spread::kVariance, eps_, out[0].ptr, out[0].layout()};
    for (std::size_t k = 0; k < 4 && k + 1 < in.size(); ++k) {
      a.params[k] = DevicePtr<const f16>(in[k + 1].ptr);
      a.pl[k] = in[k + 1].layout();
    }
    return a;
  }
  /// Streaming needs x read at y's offsets and all coefficients resident (a quarter of the ldm at most).
  static bool streams(const ApplyArgs& a, std::uint64_t ldm_bytes) {
    std::size_t param_bytes = 0;
    for (const Layout& l : a.pl) param_bytes += (l.total + 2) * sizeof(f16);
    return a.xl.same_placement(a.yl) && param_bytes <= ldm_bytes / 4;
  }

  float eps_;
  bool train_;
};

template <bool kTrain>
std::unique_ptr<BoundOp> bind_spatialbn(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"epsilon"});
  const auto eps_field = attrs.find("epsilon");
  const double eps = eps_field ? eps_field->number_above(0.0) : 1e-5;
  const Shape& x = in[0];
  if (x.rank() != 4) reject(name, fmt::format("the input must be 4-D NCHW, got {}", x.str()));
  const char* roles = kTrain ? "(scale, bias)" : "(scale, bias, mean, var)";
  for (std::size_t i = 1; i < in.size(); ++i) {
    if (!(in[i] == Shape{x[1]}))
      reject(name, fmt::format("input {} is {}, expected [{}] {}", i, in[i].str(), x[1], roles));
  }
  std::vector<Shape> out{x};
  if (kTrain) out.insert(out.end(), 2, Shape{x[1]});
  return std::make_unique<SpatialBnOp>(std::vector<Shape>(in.begin(), in.end()), out, static_cast<float>(eps), kTrain);
}

}  // namespace

void add_spatialbn_kinds(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("spatialbn", Arity{5, 5, 1}, bind_spatialbn<false>,
                                              OperatorTraits{SplitRule::kSpatialBn}));
  registry.add(std::make_unique<FunctionKind>("spatialbn_train", Arity{3, 3, 3}, bind_spatialbn<true>));
}

}  // namespace ldmsim::ops
