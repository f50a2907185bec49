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

std::string colour(std::uint32_t context) {
  if (context == kSwitchSpan) return kSwitchColour;
  if (context < kPalette.size()) return kPalette[context];
  return fmt::format("hsl({},60%,45%)", (context * 47) % 360);
}

/// For each pixel of a row, the context that held the core for most of it (kSwitchSpan: switching; -1: idle, when
/// the core was busy for less than half of the pixel).
std::vector<std::int64_t> row_pixels(const std::vector<ScheduleSpan>& spans, Cycle makespan, std::size_t contexts,
                                     std::vector<double>& share) {
  const double scale = kPlotWidth / static_cast<double>(makespan);  // pixels per cycle
  const std::size_t slots = contexts + 1;                           // the last one: switching
  share.assign(static_cast<std::size_t>(kPlotWidth) * slots, 0.0);
  for (const ScheduleSpan& span : spans) {
    const std::size_t slot = span.context == kSwitchSpan ? contexts : std::min<std::size_t>(span.context, contexts);
    const double a = static_cast<double>(span.start) * scale;
    const double b = std::min(static_cast<double>(span.end) * scale, static_cast<double>(kPlotWidth));
    for (auto px = static_cast<std::size_t>(a); static_cast<double>(px) < b; ++px) {
      const double overlap = std::min(b, static_cast<double>(px + 1)) - std::max(a, static_cast<double>(px));
      share[px * slots + slot] += overlap;
    }
  }
  std::vector<std::int64_t> pixels(kPlotWidth, -1);
  for (std::size_t px = 0; px < static_cast<std::size_t>(kPlotWidth); ++px) {
    double best = 0.0;
    double used = 0.0;
    for (std::size_t s = 0; s < slots; ++s) {
      const double c = share[px * slots + s];
      used += c;
      if (c > best) {
        best = c;
        pixels[px] = s == contexts ? static_cast<std::int64_t>(kSwitchSpan) : static_cast<std::int64_t>(s);
      }
    }
    if (used < 0.5) pixels[px] = -1;
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

std::string schedule_svg(const std::vector<std::vector<std::vector<ScheduleSpan>>>& schedule, Cycle makespan,
                         const std::vector<std::string>& names, const std::string& title) {
  std::size_t rows = 0;
  for (const auto& group : schedule) rows += group.size();
  const int row_height = rows == 0 ? 10 : std::clamp(static_cast<int>(480 / rows), 1, 14);
  const int height = kTop + static_cast<int>(rows) * row_height + 40;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{}\" y=\"16\" "
      "font-size=\"13\">{}</text>\n",
      kLeft + kPlotWidth + 20, height, kLeft, html_escape(title));
  int x = kLeft;
  for (std::size_t k = 0; k <= names.size(); ++k) {
    const bool switching = k == names.size();
    const std::string label = switching ? "context switch" : names[k];
    svg += fmt::format(
        "<rect x=\"{}\" y=\"26\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"35\">{}</text>\n", x,
        colour(switching ? kSwitchSpan : static_cast<std::uint32_t>(k)), x + 14, html_escape(label));
    x += 24 + 7 * static_cast<int>(label.size());
  }
  std::vector<double> share;
  int y = kTop;
  for (std::size_t g = 0; g < schedule.size(); ++g) {
    svg += fmt::format("<text x=\"4\" y=\"{}\">cg {}</text>\n", y + 10, g);
    for (const auto& core : schedule[g]) {
      if (makespan > 0) {
        const auto pixels = row_pixels(core, makespan, names.size(), share);
        for (int px = 0; px < kPlotWidth;) {
          int end = px + 1;
          while (end < kPlotWidth && pixels[static_cast<std::size_t>(end)] == pixels[static_cast<std::size_t>(px)]) {
            ++end;
          }
          if (const std::int64_t who = pixels[static_cast<std::size_t>(px)]; who >= 0) {
            svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", kLeft + px, y,
                               end - px, std::max(1, row_height - (row_height > 3 ? 1 : 0)),
                               colour(static_cast<std::uint32_t>(who)));
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
