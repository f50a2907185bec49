// The HTML page of `ldmsim compare` (see compare_html.hpp).
#include "compare_html.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ldmsim/sim/bytes_text.hpp"
#include "ldmsim/sim/html_escape.hpp"

namespace ldmsim::cli {

namespace {

constexpr std::string_view kHead = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ldmsim compare</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; width: 100%; }
th, td { padding: 2px 6px; border-bottom: 1px solid #ddd; text-align: right; white-space: nowrap; }
th { background: #f3f3f3; position: sticky; top: 0; }
td.layer, th.layer { text-align: left; max-width: 28em; overflow: hidden; text-overflow: ellipsis; }
.track { width: 8em; background: #eef1f6; } .track div { height: 10px; background: #4a78c2; }
.faster { color: #17803d; } .slower { color: #b3261e; } .absent { color: #999; }
tr.total td { font-weight: bold; border-top: 2px solid #888; }
</style></head><body>
)HTML";

std::string ratio_cell(double later, double first) {
  if (first <= 0) return "<td class=\"absent\">-</td>";
  const double ratio = later / first;
  const char* cls = ratio < 0.995 ? "faster" : ratio > 1.005 ? "slower" : "";
  return fmt::format("<td class=\"{}\">x{:.3f}</td>", cls, ratio);
}

}  // namespace

std::string render_compare_html(const Comparison& c) {
  std::string out(kHead);
  out += "<h1>ldmsim compare</h1>\n<ul id=\"runs\">\n";
  for (std::size_t r = 0; r < c.runs.size(); ++r) {
    const ComparedRun& run = c.runs[r];
    out += fmt::format("<li><b>{}</b>: {} ({} on {}, fusion {}, {} ops, {} cycles)</li>\n", run_letter(r),
                       html_escape(run.label), html_escape(run.workload), html_escape(run.arch),
                       run.fusion ? "on" : "off", run.ops, run.cycles);
  }
  out += "</ul>\n<table id=\"compare-table\">\n<tr><th class=\"layer\">layer</th>";
  for (std::size_t r = 0; r < c.runs.size(); ++r) {
    const std::string x = run_letter(r);
    out += fmt::format(
        "<th>cycles {0}</th><th></th>{1}<th>DMA {0}</th>{2}<th>ldm {0}</th><th>bound {0}</th>"
        "<th>roofline {0}</th>",
        x, r > 0 ? "<th>/A</th>" : "", r > 0 ? "<th>/A</th>" : "");
  }
  out += "</tr>\n";
  Cycle widest = 1;
  for (const CompareRow& row : c.rows) {
    for (const CompareCell& cell : row.runs) widest = std::max(widest, cell.cycles);
  }
  for (const CompareRow& row : c.rows) {
    std::string layers;
    for (const std::string& l : row.layers) layers += (layers.empty() ? "" : " + ") + l;
    out += fmt::format("<tr class=\"layer-row\"><td class=\"layer\" title=\"{0}\">{0}</td>", html_escape(layers));
    const CompareCell& first = row.runs.front();
    for (std::size_t r = 0; r < row.runs.size(); ++r) {
      const CompareCell& cell = row.runs[r];
      if (cell.ops == 0) {
        out += fmt::format(
            "<td class=\"absent\">-</td><td></td>{}<td class=\"absent\">-</td>{}<td></td><td></td><td></td>",
            r > 0 ? "<td></td>" : "", r > 0 ? "<td></td>" : "");
        continue;
      }
      const double width = 100.0 * static_cast<double>(cell.cycles) / static_cast<double>(widest);
      out += fmt::format(
          "<td>{}</td><td class=\"bar\"><div class=\"track\"><div style=\"width:{:.1f}%\"></div></div></td>",
          cell.cycles, width);
      if (r > 0) out += ratio_cell(static_cast<double>(cell.cycles), static_cast<double>(first.cycles));
      out += fmt::format("<td>{}</td>", bytes_text(static_cast<double>(cell.dma_bytes)));
      if (r > 0) out += ratio_cell(static_cast<double>(cell.dma_bytes), static_cast<double>(first.dma_bytes));
      const auto roof = cell.roofline_fraction();
      out += fmt::format("<td>{}</td><td>{}</td><td>{}</td>",
                         cell.ldm_high_water ? bytes_text(static_cast<double>(*cell.ldm_high_water)) : "-",
                         html_escape(cell.bound), roof ? fmt::format("{:.1f}%", 100.0 * *roof) : "-");
    }
    out += "</tr>\n";
  }
  out += "<tr class=\"total\"><td class=\"layer\">total</td>";
  for (std::size_t r = 0; r < c.runs.size(); ++r) {
    const ComparedRun& run = c.runs[r];
    out += fmt::format("<td>{}</td><td></td>", run.cycles);
    if (r > 0) out += ratio_cell(static_cast<double>(run.cycles), static_cast<double>(c.runs.front().cycles));
    out += fmt::format("<td>{}</td>", bytes_text(static_cast<double>(run.dma_bytes)));
    if (r > 0) out += ratio_cell(static_cast<double>(run.dma_bytes), static_cast<double>(c.runs.front().dma_bytes));
    out += fmt::format("<td>{}</td><td></td><td></td>", bytes_text(static_cast<double>(run.ldm_high_water)));
  }
  out += "</tr>\n</table>\n</body></html>\n";
  return out;
}

}  // namespace ldmsim::cli
