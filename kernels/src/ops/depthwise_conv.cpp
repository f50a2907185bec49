// conv's depthwise kernel (depthwise_conv.hpp). The output, a [N*K, P*Q] matrix of planes, is dealt to every core of
// every group in whole planes when there are enough of them (no input row is then read by two cores) and written in
// tiles through two alternating buffers. A core reads each plane's filter taps and bias once, with those of the rest
// of its share, and for each plane the input rows its tile's output rows need: all of them in one read when they fit
// the staging buffer, else row by row in chunks of the columns needed, so a plane of any size works.
#include "depthwise_conv.hpp"

#include <algorithm>
#include <vector>

#include "op_support.hpp"

namespace ldmsim::ops {

namespace {

/// Largest output tile a core writes at once (16 KiB of fp16, as the pools' tiles).
constexpr std::size_t kMaxTile = 8192;

/// The filter taps and biases of the output channels a core's planes use, as floats: channels first, first + 1, ...
/// (mod K), `count` of them (at most K).
struct ChannelParameters {
  std::size_t k = 0, first = 0, count = 0;
  std::vector<float> taps, bias;  ///< taps: rs() per channel

  std::size_t index(std::size_t channel) const { return (channel + k - first) % k; }
};

/// Reads the taps (and bias) of the output channels the planes [plane_begin, plane_end) use: a range of channels
/// that may wrap around a sample's last channel (two reads then), all K when there are that many planes.
ChannelParameters read_parameters(Core& core, const DepthwiseConv& job, LdmSpan<f16> staging, std::size_t plane_begin,
                                  std::size_t plane_end) {
  const ConvGeometry& g = job.g;
  const std::size_t rs = g.rs();
  ChannelParameters p{.k = g.k,
                      .first = plane_end - plane_begin >= g.k ? 0 : plane_begin % g.k,
                      .count = std::min(g.k, plane_end - plane_begin)};
  const std::size_t head = std::min(p.count, g.k - p.first);  // channels before the wrap
  const auto read = [&](DevicePtr<const f16> base, const Layout& layout, std::size_t per_channel,
                        std::vector<float>& into) {
    auto values = core.ldm().alloc<f16>(p.count * per_channel);
    tiling::gather(core, staging, base, layout, p.first * per_channel, head * per_channel, values.data());
    if (head < p.count) {
      tiling::gather(core, staging, base, layout, 0, (p.count - head) * per_channel,
                     values.data() + head * per_channel);
    }
    into.resize(p.count * per_channel);
    to_floats(values, 0, p.count * per_channel, into.data());
  };
  read(job.w, job.wl, rs, p.taps);
  if (job.has_bias) read(job.bias, job.bias_layout, 1, p.bias);
  return p;
}

void depthwise_kernel(Core& core, const DepthwiseConv& job) {
  const ConvGeometry& g = job.g;
  const std::size_t H = g.h, W = g.w, Q = g.q, PQ = g.pq(), rs = g.rs();
  const std::size_t plane_pitch = job.yl.chw_pitch;
  const tiling::Range share = tiling::my_unit_share(core, job.yl.total, plane_pitch);
  if (share.empty()) return;
  const std::size_t first_out = job.yl.logical_at_or_after(share.begin),
                    last_out = job.yl.logical_at_or_after(share.end);
  if (first_out >= last_out) {  // only padding: write its zeros
    tiling::TileWriter writer(core, job.y, tiling::ceil_even(std::min(share.size(), kMaxTile)));
    tiling::for_each_tile(share, kMaxTile, [&](tiling::Range t) {
      LdmSpan<f16> out = writer.next();
      std::fill(out.data(), out.data() + t.size(), f16{});
      writer.put(t);
    });
    writer.finish();
    return;
  }
  const std::size_t small_staging = tiling::fit_elements(core, 1, 2048);
  auto staging = core.ldm().alloc<f16>(small_staging + 2);
  const ChannelParameters params = read_parameters(core, job, staging, first_out / PQ, (last_out - 1) / PQ + 1);
  // Tiles of whole planes when a plane fits a tile (no plane's rows read by two tiles); a residual needs a buffer of
  // a tile's size too, so its tiles are half as large.
  const std::size_t plane_step = plane_pitch % 2 == 0 ? plane_pitch : 2 * plane_pitch;
  const std::size_t max_tile = job.has_residual ? kMaxTile / 2 : kMaxTile;
  const std::size_t tile_unit = plane_step <= max_tile ? plane_step : 2;
  const std::size_t tile = std::min(tiling::ceil_even(share.size()), max_tile / tile_unit * tile_unit);
  tiling::TileWriter writer(core, job.y, tile);
  LdmSpan<f16> skip;
  if (job.has_residual) skip = core.ldm().alloc<f16>(tile);
  const std::size_t cap = tiling::fit_elements(core, 2, 32768, 512);  // room for two allocations' alignment
  auto wide_staging = core.ldm().alloc<f16>(cap + 2);
  auto block = core.ldm().alloc<f16>(cap);
  // Host floats of the ldm data, grown to what the reads need (every simulated core has its own).
  std::vector<float> xs, ys(tile), acc, skips;
  const auto floats_of = [&](std::size_t n) {
    if (xs.size() < n) xs.resize(n);
    return xs.data();
  };
  const ComputeModel& model = core.arch().compute;
  const std::uint32_t lanes = model.unit(DataType::kF32).simd_lanes;
  tiling::for_each_tile(
      share, tile,
      [&](tiling::Range t) {
        std::fill(ys.begin(), ys.begin() + static_cast<std::ptrdiff_t>(t.size()), 0.0f);
        const std::size_t first = job.yl.logical_at_or_after(t.begin), last = job.yl.logical_at_or_after(t.end);
        if (job.has_residual && last > first) {
          tiling::gather(core, wide_staging, job.residual, job.residual_layout, first, last - first, skip.data());
          skips.resize(last - first);
          to_floats(skip, 0, last - first, skips.data());
        }
        for (std::size_t l = first; l < last;) {
          const std::size_t plane = l / PQ, plane_end = std::min(last, (plane + 1) * PQ);
          const std::size_t n = plane / g.k, k = plane % g.k;
          const std::size_t in_plane = (n * g.c + k / g.kg()) * H * W;  // depthwise: the group's one channel
          const float* taps = params.taps.data() + params.index(k) * rs;
          // Input rows [lo, hi) of the segment's output rows, in one read when they fit.
          const std::size_t p_first = (l % PQ) / Q, p_last = ((plane_end - 1) % PQ) / Q;
          const auto row_of = [&](std::size_t p, std::size_t r) -> std::ptrdiff_t {  // input row, maybe outside
            return static_cast<std::ptrdiff_t>(p * g.stride_h + r * g.dilation_h) -
                   static_cast<std::ptrdiff_t>(g.pad_top);
          };
          const std::size_t lo = static_cast<std::size_t>(
              std::clamp<std::ptrdiff_t>(row_of(p_first, 0), 0, static_cast<std::ptrdiff_t>(H)));
          const std::size_t hi = static_cast<std::size_t>(
              std::clamp<std::ptrdiff_t>(row_of(p_last, g.r - 1) + 1, 0, static_cast<std::ptrdiff_t>(H)));
          const bool block_fits = hi > lo && (hi - lo) * W <= cap;
          if (block_fits) {
            tiling::gather(core, wide_staging, job.x, job.xl, in_plane + lo * W, (hi - lo) * W, block.data());
            to_floats(block, 0, (hi - lo) * W, floats_of((hi - lo) * W));
          }
          for (; l < plane_end;) {
            const std::size_t p = (l % PQ) / Q, q0 = l % Q, q1 = std::min(Q, q0 + (plane_end - l));
            acc.assign(q1 - q0, 0.0f);
            // Adds tap (r, s) of every output q in [q0, q1) whose input column lies in [w_begin, w_end) (row holds
            // those columns): kernel columns in order, so each output gains its taps in (r, s) order.
            const auto add_taps = [&](std::size_t r, const float* row, std::size_t w_begin, std::size_t w_end) {
              for (std::size_t s = 0; s < g.s; ++s) {
                const std::size_t shift = s * g.dilation_w;  // input column of q: q * stride_w + shift - pad_left
                auto [qa, qb] = g.valid_columns(shift);
                const std::size_t low = w_begin + g.pad_left, high = w_end + g.pad_left;  // of q*sw + shift
                qa = std::max({qa, q0, low > shift ? (low - shift + g.stride_w - 1) / g.stride_w : 0});
                qb = std::min({qb, q1, high > shift ? (high - shift - 1) / g.stride_w + 1 : 0});
                if (qa >= qb) continue;
                const float tap = taps[r * g.s + s];
                const float* from = row + (qa * g.stride_w + shift - g.pad_left - w_begin);
                float* into = acc.data() + (qa - q0);
                if (g.stride_w == 1) {
                  for (std::size_t i = 0; i < qb - qa; ++i) into[i] += tap * from[i];
                } else {
                  for (std::size_t i = 0; i < qb - qa; ++i) into[i] += tap * from[i * g.stride_w];
                }
              }
            };
            for (std::size_t r = 0; r < g.r; ++r) {
              const std::ptrdiff_t h = row_of(p, r);
              if (h < 0 || h >= static_cast<std::ptrdiff_t>(H)) continue;  // a padding row adds nothing
              const auto row = static_cast<std::size_t>(h);
              if (block_fits) {
                add_taps(r, xs.data() + (row - lo) * W, 0, W);
                continue;
              }
              // Row by row, in chunks of the columns the segment reads.
              const auto column = [&](std::ptrdiff_t padded) {  // a padded column clipped to the input
                return static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(
                    padded - static_cast<std::ptrdiff_t>(g.pad_left), 0, static_cast<std::ptrdiff_t>(W)));
              };
              const std::size_t w_lo = column(static_cast<std::ptrdiff_t>(q0 * g.stride_w));
              const std::size_t w_hi =
                  column(static_cast<std::ptrdiff_t>((q1 - 1) * g.stride_w + (g.s - 1) * g.dilation_w + 1));
              for (std::size_t c = w_lo; c < w_hi; c += cap) {
                const std::size_t len = std::min(cap, w_hi - c);
                tiling::gather(core, wide_staging, job.x, job.xl, in_plane + row * W + c, len, block.data());
                to_floats(block, 0, len, floats_of(len));
                add_taps(r, xs.data(), c, c + len);
              }
            }
            // The store: + bias in fp32, the residual added to the rounded sum, then the activation.
            float* out = ys.data() + (job.yl.offset_of(l) - t.begin);  // a row segment is contiguous in any layout
            const float bias = job.has_bias ? params.bias[params.index(k)] : 0.0f;
            for (std::size_t i = 0; i < q1 - q0; ++i) out[i] = job.has_bias ? acc[i] + bias : acc[i];
            if (job.has_residual) {
              round_to_fp16(out, q1 - q0);
              const float* s = skips.data() + (l - first);
              for (std::size_t i = 0; i < q1 - q0; ++i) {
                out[i] = job.residual_first ? add_value(s[i], out[i]) : add_value(out[i], s[i]);
              }
            }
            if (job.activation) job.activation.apply_before_rounding(out, q1 - q0);
            const std::uint64_t vectors = (q1 - q0 + lanes - 1) / lanes;
            const std::uint32_t terms = 1u + (job.has_bias ? 1u : 0u) + (job.has_residual ? 1u : 0u);
            core.compute(KernelWork{.type = DataType::kF32,
                                    .vector_fmas = vectors * rs,
                                    .vector_ops = vectors * (terms - 1 + job.activation.ops()),
                                    .ldm_accesses = vectors * (rs + terms),
                                    .loops = 1});
            l += q1 - q0;
          }
        }
        to_halves(ys.data(), t.size(), writer.next());
        writer.put(t);
      },
      tile_unit);
  writer.finish();
}

}  // namespace

void run_depthwise_conv(Machine& machine, const DepthwiseConv& job, const std::string& label) {
  launch_all(machine, label, depthwise_kernel, job);
}

}  // namespace ldmsim::ops
