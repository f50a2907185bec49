// HTML report page: a fixed template with the summary JSON embedded in a <script type="application/json">
// element (escaped so no "</script>" can end it early) and an inline script that renders it into SVG and tables.
#include "report_html.hpp"

#include <string_view>

#include "ldmsim/sim/html_escape.hpp"

namespace ldmsim::cli {
namespace {

constexpr std::string_view kHead = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@TITLE@</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0; } td, th { padding: 3px 8px; border: 1px solid #ddd; text-align: right; }
th { background: #f4f4f4; } td.l, th.l { text-align: left; }
.fault { color: #b00; font-weight: bold; } .ok { color: #070; }
.groups { display: flex; flex-wrap: wrap; gap: 18px; } .group { text-align: center; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
.legend { font-size: 12px; color: #555; }
</style></head>
<body>
<h1 id="title">@TITLE@</h1>
<div id="run-info"></div>
<h2>Summary</h2><div id="summary"></div>
<h2>Layers</h2><p class="legend" id="layers-legend"></p><div id="layer-timeline"></div><div id="layers"></div>
<h2>Per-core utilization</h2><p class="legend" id="heatmap-legend"></p><div id="heatmap" class="groups"></div>
<h2>Achieved DMA bandwidth over time</h2><div id="bandwidth"></div>
<h2>Request sizes</h2><div id="histogram"></div>
<h2>Slowest requests</h2><div id="slowest"></div>
<h2>Faults and lint warnings</h2><div id="issues"></div>
<script type="application/json" id="summary-data">)HTML";

constexpr std::string_view kTail = R"HTML(</script>
<script>
"use strict";
(function () {
  const S = JSON.parse(document.getElementById("summary-data").textContent);
  const NS = "http://www.w3.org/2000/svg";
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function bytes(b) {
    const u = ["B", "KiB", "MiB", "GiB", "TiB"]; let i = 0;
    while (b >= 1024 && i + 1 < u.length) { b /= 1024; i++; }
    return (i === 0 ? b.toFixed(0) : b.toPrecision(3)) + " " + u[i];
  }
  function gbs(x) { return (x / 1e9).toPrecision(3) + " GB/s"; }
  function pct(x) { return x === null || x === undefined ? "-" : (100 * x).toFixed(1) + "%"; }
  function table(id, head, rows, left) {
    const t = el("table", {id: id});
    const tr = el("tr");
    head.forEach((h, i) => tr.appendChild(el("th", i < (left || 0) ? {class: "l"} : {}, h)));
    t.appendChild(tr);
    rows.forEach(r => {
      const row = el("tr");
      r.forEach((c, i) => row.appendChild(el("td", i < (left || 0) ? {class: "l"} : {}, c)));
      t.appendChild(row);
    });
    return t;
  }
  // Run info
  const info = document.getElementById("run-info");
  const run = S.run || {};
  info.appendChild(el("p", {}, "arch " + S.arch + " (" + S.core_grid.rows + "x" + S.core_grid.cols +
      " cores per group, " + (S.clock_hz / 1e9) + " GHz), workload " + (run.workload || "?") + ": " + S.cycles +
      " cycles = " + (S.seconds * 1e6).toPrecision(4) + " us simulated, " + S.requests + " DMA requests, " +
      bytes(S.bytes) + ", " + gbs(S.bandwidth_bytes_per_second)));
  if (S.fault) {
    info.appendChild(el("p", {class: "fault", id: "fault-banner"}, "The run trapped: the trace is complete up to the fault at cycle " +
        S.fault.cycle + " (cg " + S.fault.cg + ", core " + S.fault.core + ", kernel " + S.fault.kernel + "): " + S.fault.message));
  } else {
    info.appendChild(el("p", {class: "ok"}, "Trace complete."));
  }
  // Summary table
  document.getElementById("summary").appendChild(table("summary-table",
      ["core group", "requests", "bytes", "get", "put", "remote", "bandwidth", "cycles", "launches", "barriers"],
      S.groups.map(g => ["cg " + g.cg, g.requests, bytes(g.bytes), bytes(g.get_bytes), bytes(g.put_bytes),
                         bytes(g.remote_bytes || 0),
                         gbs(g.bandwidth_bytes_per_second), g.cycles, g.launches, g.barriers]), 1));
  // Layers: a timeline strip (one rect per layer, colored by bound) and a table, from stats.json's ops
  const layers = S.layers || [];
  const boundColor = {compute: "#4c78a8", dma: "#f58518", sync: "#b279a2", none: "#bbbbbb"};
  document.getElementById("layers-legend").textContent = layers.length === 0
      ? "No layers: the run directory has no stats.json with per-op entries (the demo, or a trace alone)."
      : layers.length + " layers. Timeline colors: compute-bound blue, DMA-bound orange, barrier-bound purple.";
  if (layers.length > 0) {
    const TW = 760, TH = 44, end = Math.max(1, S.cycles, layers[layers.length - 1].end);
    const tl = svg("svg", {width: TW, height: TH, id: "layer-timeline-chart", role: "img"});
    layers.forEach(l => {
      const x = 10 + (TW - 20) * l.start / end, w = Math.max(1, (TW - 20) * l.cycles / end);
      const r = svg("rect", {x: x, y: 4, width: w, height: 22, fill: boundColor[l.bound] || "#888", stroke: "#fff",
                             "stroke-width": 0.5, "class": "layer-bar"});
      r.appendChild(svg("title", {}, l.name + " (" + l.type + "): " + l.cycles + " cycles, " + l.bound + "-bound, " +
          bytes(l.dma_bytes) + " DMA, " + pct(l.peak_fraction) + " of peak"));
      tl.appendChild(r);
    });
    tl.appendChild(svg("text", {x: 10, y: 40}, "0 us"));
    tl.appendChild(svg("text", {x: TW - 120, y: 40}, (end / S.clock_hz * 1e6).toPrecision(4) + " us"));
    document.getElementById("layer-timeline").appendChild(tl);
    document.getElementById("layers").appendChild(table("layers-table",
        ["layer", "type", "start", "cycles", "share", "bound", "DMA bytes", "peak", "ldm", "flop/B", "roofline"],
        layers.map(l => [l.name, l.type, l.start, l.cycles, pct(l.cycles / end), l.bound, bytes(l.dma_bytes),
                         pct(l.peak_fraction), l.ldm_high_water == null ? "-" : bytes(l.ldm_high_water),
                         l.arithmetic_intensity == null ? "-" : l.arithmetic_intensity.toPrecision(3),
                         l.roofline_fraction == null ? "-" : pct(l.roofline_fraction) + " " + l.roofline_limit]),
        2));
  }
  // Heat maps: one core grid per group
  document.getElementById("heatmap-legend").textContent =
      "Color: DMA-busy fraction (union of the core's request spans / group cycles), white 0% to dark blue 100%. " +
      (S.run_stats ? "Tooltips add busy and waiting fractions from stats.json." : "No stats.json: busy/waiting unknown.");
  const cell = 26, rows = S.core_grid.rows, cols = S.core_grid.cols;
  const heat = document.getElementById("heatmap");
  S.groups.forEach(g => {
    const box = el("div", {class: "group"});
    const w = cols * cell + 2, h = rows * cell + 2;
    const s = svg("svg", {width: w, height: h, id: "heatmap-cg" + g.cg, role: "img"});
    g.cores.forEach(c => {
      const v = Math.max(0, Math.min(1, c.dma_busy_fraction || 0));
      const color = "rgb(" + Math.round(255 - 225 * v) + "," + Math.round(255 - 175 * v) + "," + Math.round(255 - 55 * v) + ")";
      const r = svg("rect", {x: 1 + c.col * cell, y: 1 + c.row * cell, width: cell - 2, height: cell - 2, fill: color,
                             stroke: "#999", "class": "heat-cell"});
      r.appendChild(svg("title", {}, "cg " + g.cg + " core " + c.row + "," + c.col + ": " + c.requests + " requests, " +
          bytes(c.get_bytes + c.put_bytes) + ", DMA-busy " + pct(c.dma_busy_fraction) + ", busy " + pct(c.busy_fraction) +
          ", waiting " + pct(c.waiting_fraction)));
      s.appendChild(r);
    });
    box.appendChild(s);
    box.appendChild(el("div", {}, "cg " + g.cg));
    heat.appendChild(box);
  });
  // Bandwidth over time: one line per group
  const W = 760, H = 240, L = 60, B = 30;
  const bw = svg("svg", {width: W, height: H, id: "bandwidth-chart", role: "img"});
  const bin = S.bin_cycles;
  let peak = 0, nbins = 1;
  S.groups.forEach(g => { nbins = Math.max(nbins, g.bandwidth_over_time.length);
                          g.bandwidth_over_time.forEach(v => { peak = Math.max(peak, v); }); });
  if (peak <= 0) peak = 1;
  const colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];
  bw.appendChild(svg("line", {x1: L, y1: H - B, x2: W - 10, y2: H - B, stroke: "#444"}));
  bw.appendChild(svg("line", {x1: L, y1: 10, x2: L, y2: H - B, stroke: "#444"}));
  bw.appendChild(svg("text", {x: 4, y: 16}, gbs(peak)));
  bw.appendChild(svg("text", {x: 4, y: H - B}, "0"));
  const endUs = nbins * bin / S.clock_hz * 1e6;
  bw.appendChild(svg("text", {x: W - 120, y: H - 8}, endUs.toPrecision(4) + " us"));
  bw.appendChild(svg("text", {x: L, y: H - 8}, "0 us"));
  S.groups.forEach((g, i) => {
    const pts = g.bandwidth_over_time.map((v, k) =>
        (L + (W - L - 10) * (k + 0.5) / nbins).toFixed(1) + "," + (H - B - (H - B - 10) * v / peak).toFixed(1));
    bw.appendChild(svg("polyline", {points: pts.join(" "), fill: "none", stroke: colors[i % colors.length],
                                    "stroke-width": 1.5, "class": "bw-line"}));
    bw.appendChild(svg("text", {x: W - 60, y: 20 + 14 * i, fill: colors[i % colors.length]}, "cg " + g.cg));
  });
  document.getElementById("bandwidth").appendChild(bw);
  // Request-size histogram
  const hist = S.size_histogram;
  const HW = 760, HH = 220, HB = 40;
  const hs = svg("svg", {width: HW, height: HH, id: "histogram-chart", role: "img"});
  let most = 1;
  hist.forEach(b => { most = Math.max(most, b.requests); });
  const barW = hist.length ? Math.min(80, (HW - 20) / hist.length) : 10;
  hist.forEach((b, i) => {
    const hgt = (HH - HB - 20) * b.requests / most;
    const x = 10 + i * barW;
    const r = svg("rect", {x: x + 2, y: HH - HB - hgt, width: barW - 4, height: hgt, fill: "#4c78a8", "class": "hist-bar"});
    r.appendChild(svg("title", {}, bytes(b.min) + " .. " + bytes(b.max) + ": " + b.requests + " requests, " + bytes(b.bytes)));
    hs.appendChild(r);
    hs.appendChild(svg("text", {x: x + 2, y: HH - HB + 14}, bytes(b.min)));
    hs.appendChild(svg("text", {x: x + 2, y: HH - HB - hgt - 4}, b.requests));
  });
  document.getElementById("histogram").appendChild(hs);
  // Slowest and issues
  document.getElementById("slowest").appendChild(table("slowest-table",
      ["cg", "core", "op", "bytes", "main", "issue", "end", "cycles"],
      S.slowest.map(r => [r.cg, Math.floor(r.core / cols) + "," + (r.core % cols), r.op, r.bytes,
                          "0x" + r.main.toString(16), r.issue, r.end, r.latency_cycles]), 0));
  const issues = document.getElementById("issues");
  issues.appendChild(el("p", {}, S.faults + " faults, " + S.lint_warnings + " lint warnings"));
  issues.appendChild(table("issues-table", ["kind", "what", "cg", "core", "cycle", "message"],
      S.issues.map(i => [i.kind, i.what, i.cg, i.core < 0 ? "-" : Math.floor(i.core / cols) + "," + (i.core % cols),
                         i.cycle, i.message]), 2));
  const done = el("div", {id: "report-rendered", hidden: "hidden"}, "ok");
  document.body.appendChild(done);
})();
</script>
</body></html>
)HTML";

std::string replace_all(std::string_view text, std::string_view what, const std::string& with) {
  std::string out;
  std::size_t pos = 0;
  for (std::size_t hit = text.find(what); hit != std::string_view::npos; hit = text.find(what, pos)) {
    out.append(text.substr(pos, hit - pos));
    out += with;
    pos = hit + what.size();
  }
  out.append(text.substr(pos));
  return out;
}

}  // namespace

std::string render_report_html(const nlohmann::json& summary, const std::string& title) {
  // ensure_ascii plus escaping '<' keeps "</script>" and "<!--" out of the embedded JSON.
  std::string data = summary.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  data = replace_all(data, "<", "\\u003c");
  const std::string t = html_escape(title);
  return replace_all(kHead, "@TITLE@", t) + data + std::string(kTail);
}

}  // namespace ldmsim::cli
