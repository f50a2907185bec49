// Schedule picture of a multi-model run (see schedule_svg.hpp).
#include "schedule_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>

#include "ldmsim/sim/html_escape.hpp"

namespace ldmsim {

namespace {

constexpr int kPlotWidth = 1000;  // pixels of simulated time; spans are binned per pixel, so size is bounded
constexpr int kLeft = 70;
constexpr int kTop = 50;
constexpr std::array<const char*, 8> kPalette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                                 "#9467bd", "#8c564b", "#e377c2", "#17becf"};
constexpr const char* kSwitchColour = "#9e9e9e";
constexpr const char* kDmaWaitColour = "#f2cf5b";  // no model's colour: a pale yellow
constexpr std::int64_t kIdlePixel = -1;
constexpr std::int64_t kDmaWaitPixel = -2;

std::string colour(std::int64_t who) {
  if (who == kDmaWaitPixel) return kDmaWaitColour;
  if (who == static_cast<std::int64_t>(kSwitchSpan)) return kSwitchColour;
  const auto context = static_cast<std::size_t>(who);
  if (context < kPalette.size()) return kPalette[context];
  return fmt::format("hsl({},60%,45%)", (context * 47) % 360);
}

/// The parts of the union of `waits` (by start) that no span of `held` (time-ordered, disjoint) covers: when the
/// core was neither held nor switching, yet some model waited for its DMA.
std::vector<ScheduleSpan> waits_off_core(const std::vector<ScheduleSpan>& waits,
                                         const std::vector<ScheduleSpan>& held) {
  std::vector<ScheduleSpan> merged;
  for (const ScheduleSpan& w : waits) {
    if (w.end <= w.start) continue;
    if (!merged.empty() && w.start <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, w.end);
    } else {
      merged.push_back(w);
    }
  }
  std::vector<ScheduleSpan> out;
  std::size_t h = 0;
  for (const ScheduleSpan& w : merged) {
    Cycle from = w.start;
    while (h < held.size() && held[h].end <= from) ++h;
    for (std::size_t k = h; k < held.size() && held[k].start < w.end && from < w.end; ++k) {
      if (held[k].start > from) out.push_back({from, held[k].start, 0});
      from = std::max(from, held[k].end);
    }
    if (from < w.end) out.push_back({from, w.end, 0});
  }
  return out;
}

/// Adds `span`'s overlap with each pixel to that pixel's `slot`.
void bin(const ScheduleSpan& span, std::size_t slot, std::size_t slots, double scale, std::vector<double>& share) {
  const double a = static_cast<double>(span.start) * scale;
  const double b = std::min(static_cast<double>(span.end) * scale, static_cast<double>(kPlotWidth));
  for (auto px = static_cast<std::size_t>(a); static_cast<double>(px) < b; ++px) {
    const double overlap = std::min(b, static_cast<double>(px + 1)) - std::max(a, static_cast<double>(px));
    share[px * slots + slot] += overlap;
  }
}

/// For each pixel of a row, what took most of it: a context (its index), switching (kSwitchSpan) or a DMA wait off
/// the core (kDmaWaitPixel); kIdlePixel when those together cover less than half of the pixel.
std::vector<std::int64_t> row_pixels(const std::vector<ScheduleSpan>& spans, const std::vector<ScheduleSpan>& waits,
                                     Cycle makespan, std::size_t contexts, std::vector<double>& share) {
  const double scale = kPlotWidth / static_cast<double>(makespan);  // pixels per cycle
  const std::size_t switching = contexts;                           // slots: the contexts, switching, DMA wait
  const std::size_t waiting = contexts + 1;
  const std::size_t slots = contexts + 2;
  share.assign(static_cast<std::size_t>(kPlotWidth) * slots, 0.0);
  for (const ScheduleSpan& span : spans) {
    bin(span, span.context == kSwitchSpan ? switching : std::min<std::size_t>(span.context, contexts - 1), slots, scale,
        share);
  }
  for (const ScheduleSpan& wait : waits_off_core(waits, spans)) bin(wait, waiting, slots, scale, share);
  std::vector<std::int64_t> pixels(kPlotWidth, kIdlePixel);
  for (std::size_t px = 0; px < static_cast<std::size_t>(kPlotWidth); ++px) {
    double best = 0.0;
    double used = 0.0;
    for (std::size_t s = 0; s < slots; ++s) {
      const double c = share[px * slots + s];
      used += c;
      if (c > best) {
        best = c;
        pixels[px] = s == switching ? static_cast<std::int64_t>(kSwitchSpan)
                     : s == waiting ? kDmaWaitPixel
                                    : static_cast<std::int64_t>(s);
      }
    }
    if (used < 0.5) pixels[px] = kIdlePixel;
  }
  return pixels;
}

/// A tick step of 1, 2 or 5 times a power of ten giving at most five intervals up to `span` (labels stay round).
Cycle round_step(Cycle span) {
  for (Cycle power = 1;; power *= 10) {
    if (power > std::numeric_limits<Cycle>::max() / 100) return power;
    for (const Cycle m : {Cycle{1}, Cycle{2}, Cycle{5}}) {
      if (m * power * 5 >= span) return m * power;
    }
  }
}

}  // namespace

std::string schedule_svg(const CoreSpans& schedule, const CoreSpans& dma_waits, Cycle makespan,
                         const std::vector<std::string>& names, const std::string& title) {
  std::size_t rows = 0;
  for (const auto& group : schedule) rows += group.size();
  // At least 2 px a row (a 1-px row with no gap reads as one block); at most 14.
  const int row_height = rows == 0 ? 10 : std::clamp(static_cast<int>(480 / rows), 2, 14);
  const int height = kTop + static_cast<int>(rows) * row_height + 40;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{}\" y=\"16\" "
      "font-size=\"13\">{}</text>\n",
      kLeft + kPlotWidth + 20, height, kLeft, html_escape(title));
  // The legend: each model, then switching, DMA wait and idle (white, outlined).
  int x = kLeft;
  const auto key = [&](const std::string& label, const std::string& fill, const char* id) {
    svg += fmt::format(
        "<rect x=\"{}\" y=\"26\" width=\"10\" height=\"10\" fill=\"{}\" stroke=\"#888\" stroke-width=\"0.5\"/>"
        "<text x=\"{}\" y=\"35\"{}>{}</text>\n",
        x, fill, x + 14, id[0] == '\0' ? std::string() : fmt::format(" id=\"{}\"", id), html_escape(label));
    x += 24 + 7 * static_cast<int>(label.size());
  };
  for (std::size_t k = 0; k < names.size(); ++k) key(names[k], colour(static_cast<std::int64_t>(k)), "");
  key("context switch", kSwitchColour, "key-switch");
  key("waiting for DMA", kDmaWaitColour, "key-dma-wait");
  key("idle", "white", "key-idle");
  std::vector<double> share;
  const std::vector<ScheduleSpan> none;
  int y = kTop;
  for (std::size_t g = 0; g < schedule.size(); ++g) {
    svg += fmt::format("<text x=\"4\" y=\"{}\">cg {}</text>\n", y + 10, g);
    for (std::size_t c = 0; c < schedule[g].size(); ++c) {
      const auto& waits = g < dma_waits.size() && c < dma_waits[g].size() ? dma_waits[g][c] : none;
      if (makespan > 0 && !names.empty()) {
        const auto pixels = row_pixels(schedule[g][c], waits, makespan, names.size(), share);
        for (int px = 0; px < kPlotWidth;) {
          int end = px + 1;
          while (end < kPlotWidth && pixels[static_cast<std::size_t>(end)] == pixels[static_cast<std::size_t>(px)]) {
            ++end;
          }
          if (const std::int64_t who = pixels[static_cast<std::size_t>(px)]; who != kIdlePixel) {
            svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", kLeft + px, y,
                               end - px, row_height - (row_height > 3 ? 1 : 0), colour(who));
          }
          px = end;
        }
      }
      y += row_height;
    }
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", kLeft,
                     kTop, kPlotWidth, y - kTop);
  if (makespan > 0) {
    const Cycle step = round_step(makespan);
    for (Cycle tick = 0; tick <= makespan; tick += step) {
      const double tx = kLeft + kPlotWidth * static_cast<double>(tick) / static_cast<double>(makespan);
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", tx, y + 16, tick);
    }
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">cycles (one row per compute core)</text>\n",
                     kLeft + kPlotWidth / 2, y + 32);
  svg += "</svg>\n";
  return svg;
}

}  // namespace ldmsim
