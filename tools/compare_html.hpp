// The HTML page of `ldmsim compare --html FILE`: the runs, then one table row per aligned layer set with each
// run's cycles as a bar, its ratio to the first run coloured (faster green, slower red), DMA bytes, ldm, bound
// and roofline fraction; self-contained, no script.
#pragma once

#include <string>

#include "ldmsim/trace_analysis/compare.hpp"

namespace ldmsim::cli {

std::string render_compare_html(const Comparison& comparison);

}  // namespace ldmsim::cli
