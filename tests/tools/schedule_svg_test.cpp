// The schedule picture of models run together (session/src/schedule_svg.hpp): a pixel a model held is its colour,
// one where no model held the core but one waited for its DMA is the DMA-wait colour, the rest stays white (idle),
// and the legend names all of them.
#include "schedule_svg.hpp"

#include <catch2/catch.hpp>
#include <regex>
#include <string>
#include <vector>

using namespace ldmsim;

namespace {

struct Bar {
  int x = 0;
  int width = 0;
  std::string fill;
};

/// The bars of the picture's rows (rects at the first row's y), in order.
std::vector<Bar> row_bars(const std::string& svg) {
  const std::regex rect(R"re(<rect x="(\d+)" y="50" width="(\d+)" height="\d+" fill="([^"]+)"/>)re");
  std::vector<Bar> bars;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) {
    bars.push_back({std::stoi((*it)[1].str()), std::stoi((*it)[2].str()), (*it)[3].str()});
  }
  return bars;
}

}  // namespace

TEST_CASE("schedule.svg draws DMA waits off the core apart from idle time, with a legend", "[cli][schedule]") {
  // One core, makespan 1000 cycles = 1000 pixels from x = 70. Model a holds [0, 300), then a switch [300, 320) and
  // model b holds [320, 500). a waits for its DMA over [300, 700): on the core's time until 500 (b ran), off it from
  // 500 to 700. b's wait [800, 850) is off the core too; [700, 800) and [850, 1000) are idle.
  const CoreSpans schedule = {{{{0, 300, 0}, {300, 320, kSwitchSpan}, {320, 500, 1}}}};
  const CoreSpans waits = {{{{300, 700, 0}, {800, 850, 1}}}};
  const std::string svg = schedule_svg(schedule, waits, 1000, {"a", "b"}, "two models");
  const std::vector<Bar> bars = row_bars(svg);
  REQUIRE(bars.size() == 5);
  CHECK((bars[0].x == 70 && bars[0].width == 300 && bars[0].fill == "#1f77b4"));   // a
  CHECK((bars[1].x == 370 && bars[1].width == 20 && bars[1].fill == "#9e9e9e"));   // switching
  CHECK((bars[2].x == 390 && bars[2].width == 180 && bars[2].fill == "#ff7f0e"));  // b
  CHECK((bars[3].x == 570 && bars[3].width == 200 && bars[3].fill == "#f2cf5b"));  // a waits, the core is free
  CHECK((bars[4].x == 870 && bars[4].width == 50 && bars[4].fill == "#f2cf5b"));   // b waits
  // The legend: each model, switching, DMA wait and idle.
  CHECK(svg.find(">a</text>") != std::string::npos);
  CHECK(svg.find(">b</text>") != std::string::npos);
  CHECK(svg.find("id=\"key-switch\">context switch</text>") != std::string::npos);
  CHECK(svg.find("fill=\"#f2cf5b\" stroke=\"#888\" stroke-width=\"0.5\"/><text x=") != std::string::npos);
  CHECK(svg.find("id=\"key-dma-wait\">waiting for DMA</text>") != std::string::npos);
  CHECK(svg.find("id=\"key-idle\">idle</text>") != std::string::npos);

  // Without the waits the same time is idle: only the held spans and the switch are drawn.
  const std::vector<Bar> plain = row_bars(schedule_svg(schedule, {}, 1000, {"a", "b"}, "two models"));
  CHECK(plain.size() == 3);
}

TEST_CASE("schedule.svg: a wait wholly on another model's time draws as that model's", "[cli][schedule]") {
  const CoreSpans schedule = {{{{0, 500, 1}}}};
  const CoreSpans waits = {{{{100, 400, 0}}}};
  const std::vector<Bar> bars = row_bars(schedule_svg(schedule, waits, 1000, {"a", "b"}, "t"));
  REQUIRE(bars.size() == 1);
  CHECK((bars[0].x == 70 && bars[0].width == 500 && bars[0].fill == "#ff7f0e"));
}
