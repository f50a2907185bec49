// conv's depthwise kernel (depthwise_conv.hpp). The output, a [N*K, P*Q] matrix of planes, is dealt to every core of
// every group in whole planes when there are enough of them (no input row is then read by two cores) and written in
// tiles through two alternating buffers sized to the free local store. A core reads its planes' filter taps and
// biases a window of channels at a time (ChannelWindow), and for each plane the input rows its tile's output rows
// need: all of them in one read when they fit the staging buffer, else row by row in chunks of the columns needed,
// so a plane of any size and a batch of any channel count work.
#include "depthwise_conv.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <source_location>
#include <vector>

#include "op_support.hpp"
#include "pooled_floats.hpp"

namespace ldmsim::ops {

namespace {

/// What each pooled host vector of the kernel holds (PooledFloats roles).
constexpr std::size_t kTapRole = 0, kBiasRole = 1, kRowsRole = 2, kOutputRole = 3, kSumsRole = 4, kResidualRole = 5;

/// Largest output tile a core writes at once (16 KiB of fp16, as the pools' tiles).
constexpr std::size_t kMaxTile = 8192;
/// The least each of the two window buffers keeps, so a tile never takes the whole store.
constexpr std::size_t kLeastWindow = 512;

/// The filter taps (and biases) of the output channels of a core's planes (up to plane_end), read from device
/// memory as its planes reach them: channels first, first + 1, ... (mod K), at most `capacity` of them in ldm at once
/// and no more than the planes left need (a core of a large batch may see every channel; its planes go through them
/// in order, so each window is read once per pass).
class ChannelWindow {
 public:
  ChannelWindow(Core& core, const DepthwiseConv& job, std::size_t capacity, std::size_t plane_end)
      : core_(core),
        job_(job),
        capacity_(std::min(capacity, job.g.k)),
        plane_end_(plane_end),
        taps_(core.ldm().alloc<f16>(capacity_ * job.g.rs())),
        tap_values_(core, kTapRole),
        bias_values_(core, kBiasRole) {
    if (job.has_bias) bias_ = core.ldm().alloc<f16>(capacity_);
  }

  /// The taps (rs() floats) of plane `plane`'s channel, read with the next planes' when not held.
  const float* taps(std::size_t plane, LdmSpan<f16> staging) {
    const std::size_t k = plane % job_.g.k;
    if (count_ == 0 || index(k) >= count_) read_from(plane, staging);
    return (*tap_values_).data() + index(k) * job_.g.rs();
  }
  /// Its bias (0 without one); after taps(plane).
  float bias(std::size_t plane) const { return job_.has_bias ? (*bias_values_)[index(plane % job_.g.k)] : 0.0f; }

 private:
  std::size_t index(std::size_t k) const { return (k + job_.g.k - first_) % job_.g.k; }

  void read_from(std::size_t plane, LdmSpan<f16> staging) {
    first_ = plane % job_.g.k, count_ = std::min(capacity_, plane_end_ > plane ? plane_end_ - plane : 1);
    const std::size_t head = std::min(count_, job_.g.k - first_);  // channels before the wrap to channel 0
    // The window's ldm buffers (taps_, bias_) stay allocated: the core computes on them; the host converts the
    // values from where the reads put them.
    const auto read = [&](DevicePtr<const f16> base, const Layout& layout, std::size_t per_channel,
                          std::vector<float>& into) {
      into.resize(count_ * per_channel);
      gather_floats(core_, staging, base, layout, first_ * per_channel, head * per_channel, into.data());
      if (head < count_) {
        gather_floats(core_, staging, base, layout, 0, (count_ - head) * per_channel, into.data() + head * per_channel);
      }
    };
    read(job_.w, job_.wl, job_.g.rs(), *tap_values_);
    if (job_.has_bias) read(job_.bias, job_.bias_layout, 1, *bias_values_);
  }

  Core& core_;
  const DepthwiseConv& job_;
  std::size_t capacity_, plane_end_, first_ = 0, count_ = 0;
  LdmSpan<f16> taps_, bias_;
  PooledFloats tap_values_, bias_values_;
};

/// Adds one kernel row's taps to `count` outputs: sums[i] += taps[s] x row[i * stride + s * dilation] for s in
/// order, where `row` is the input row with its padding columns as zeros, from the first output's first column.
/// Each output gains its taps in the order the padding-skipping loop adds them: a tap over the padding adds +-0,
/// which leaves a sum started at +0 unchanged (such a sum is never -0) when the tap is finite. W: the kernel's
/// width when known at compile time (0: `width`).
template <std::size_t W>
void add_row_taps(const float* taps, std::size_t width, const float* row, std::size_t stride, std::size_t dilation,
                  float* sums, std::size_t count) {
  const std::size_t s_end = W > 0 ? W : width;
  if (stride == 1 && dilation == 1) {
    for (std::size_t i = 0; i < count; ++i) {
      float sum = sums[i];
      for (std::size_t s = 0; s < s_end; ++s) sum += taps[s] * row[i + s];
      sums[i] = sum;
    }
    return;
  }
  for (std::size_t i = 0; i < count; ++i) {
    const float* x = row + i * stride;
    float sum = sums[i];
    for (std::size_t s = 0; s < s_end; ++s) sum += taps[s] * x[s * dilation];
    sums[i] = sum;
  }
}

using RowTaps = void (*)(const float*, std::size_t, const float*, std::size_t, std::size_t, float*, std::size_t);

RowTaps row_taps_for(std::size_t width) {
  switch (width) {
    case 3:
      return add_row_taps<3>;
    case 5:
      return add_row_taps<5>;
    case 7:
      return add_row_taps<7>;
    default:
      return add_row_taps<0>;
  }
}

void depthwise_kernel(Core& core, const DepthwiseConv& job) {
  const ConvGeometry& g = job.g;
  const std::size_t H = g.h, W = g.w, Q = g.q, PQ = g.pq(), rs = g.rs();
  const std::size_t plane_pitch = job.yl.chw_pitch;
  const tiling::Range share = tiling::my_unit_share(core, job.yl.total, plane_pitch);
  if (share.empty()) return;
  // The local store: the channel window (a sixteenth of the store at most, 4 KiB), the output tiles (and as many
  // of the residual), then the two window buffers take what is left.
  const std::size_t window_bytes = std::min<std::size_t>(4096, core.ldm().capacity() / 16);
  const std::size_t last_plane = (job.yl.logical_at_or_after(share.end) + PQ - 1) / PQ;
  ChannelWindow channels(core, job, std::max<std::size_t>(1, window_bytes / sizeof(f16) / (rs + 1)), last_plane);
  const std::size_t tile_buffers = job.has_residual ? 3 : 2;
  const std::size_t room =
      tiling::fit_elements(core, tile_buffers, kMaxTile, 2 * (kLeastWindow + 2) * sizeof(f16) + 512);
  // Tiles of whole planes when a plane fits a tile (no plane's rows read by two tiles).
  const std::size_t plane_step = plane_pitch % 2 == 0 ? plane_pitch : 2 * plane_pitch;
  const std::size_t tile_unit = plane_step <= room ? plane_step : 2;
  const std::size_t tile = std::min(tiling::ceil_even(share.size()), room / tile_unit * tile_unit);
  tiling::TileWriter writer(core, job.y, tile);
  LdmSpan<f16> skip;
  if (job.has_residual) skip = core.ldm().alloc<f16>(tile);
  const std::size_t cap = tiling::fit_elements(core, 2, 32768, 512);  // room for two allocations' alignment
  auto wide_staging = core.ldm().alloc<f16>(cap + 2);
  // The rows in ldm as the core computes on them; the host converts them from where the reads put them.
  [[maybe_unused]] const auto block = core.ldm().alloc<f16>(cap);
  // Host floats of the ldm data, grown to what the reads need (every simulated core has its own, borrowed from its
  // host thread's pool).
  PooledFloats pooled_xs(core, kRowsRole), pooled_ys(core, kOutputRole), pooled_acc(core, kSumsRole),
      pooled_skips(core, kResidualRole);
  std::vector<float>& xs = *pooled_xs;
  std::vector<float>& ys = *pooled_ys;
  std::vector<float>& acc = *pooled_acc;
  std::vector<float>& skips = *pooled_skips;
  ys.resize(tile);
  const auto floats_of = [&](std::size_t n) {
    if (xs.size() < n) xs.resize(n);
    return xs.data();
  };
  // A plane's rows read whole are held with their padding columns as zeros (padded_width columns a row, the padded
  // column 0 first), so each kernel row's taps run over an output row segment without bounds.
  const std::size_t padded_width = std::max(g.pad_left + W, (Q - 1) * g.stride_w + (g.s - 1) * g.dilation_w + 1);
  const RowTaps row_taps = row_taps_for(g.s);
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
          const float* taps = channels.taps(plane, wide_staging);
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
          // Rows read whole, and every tap finite (an infinite tap over the padding would add NaN): padded rows.
          const bool padded_rows = block_fits && std::all_of(taps, taps + rs, [](float v) { return std::isfinite(v); });
          // Either way one read of the plane's rows: one code site for checks and lints.
          const std::source_location rows_read = std::source_location::current();
          if (padded_rows) {
            // Converted from where the read put them: the rows' halves need no copy in ldm.
            float* rows = floats_of((hi - lo) * padded_width);
            for (std::size_t i = 0; i < hi - lo; ++i) {
              float* row = rows + i * padded_width;
              std::fill(row, row + g.pad_left, 0.0f);
              std::fill(row + g.pad_left + W, row + padded_width, 0.0f);
            }
            const auto convert = [&](std::size_t at, const f16* from, std::size_t left) {
              while (left > 0) {  // a stretch may hold several rows
                const std::size_t column = at % W, take = std::min(left, W - column);
                halves_to_floats(std::span<const f16>(from, take),
                                 std::span<float>(rows + at / W * padded_width + g.pad_left + column, take));
                at += take, from += take, left -= take;
              }
            };
            // By reference: the GatheredRun then holds it in place instead of allocating for its captures.
            tiling::gather_each(core, wide_staging, job.x, job.xl, in_plane + lo * W, (hi - lo) * W, std::cref(convert),
                                rows_read);
          } else if (block_fits) {
            gather_floats(core, wide_staging, job.x, job.xl, in_plane + lo * W, (hi - lo) * W, floats_of((hi - lo) * W),
                          rows_read);
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
              if (padded_rows) {
                row_taps(taps + r * g.s, g.s, xs.data() + (row - lo) * padded_width + q0 * g.stride_w, g.stride_w,
                         g.dilation_w, acc.data(), q1 - q0);
                continue;
              }
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
                gather_floats(core, wide_staging, job.x, job.xl, in_plane + row * W + c, len, floats_of(len));
                add_taps(r, xs.data(), c, c + len);
              }
            }
            // The store: + bias in fp32, the residual added to the rounded sum, then the activation.
            float* out = ys.data() + (job.yl.offset_of(l) - t.begin);  // a row segment is contiguous in any layout
            const float bias = channels.bias(plane);
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
