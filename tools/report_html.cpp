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
th { background: #f4f4f4; } td.l, th.l, #check-table td:last-child { text-align: left; }
.fault { color: #b00; font-weight: bold; } .ok { color: #070; } .check { color: #a50; font-weight: bold; }
.groups { display: flex; flex-wrap: wrap; gap: 18px; } .group { text-align: center; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
svg.chart { width: 100%; height: auto; max-width: 1100px; display: block; }
.legend { font-size: 12px; color: #555; }
.key { display: inline-block; margin-right: 14px; font-size: 12px; }
.swatch { display: inline-block; width: 18px; height: 4px; vertical-align: middle; margin-right: 5px; }
</style></head>
<body>
<h1 id="title">@TITLE@</h1>
<div id="run-info"></div>
<h2 id="ranks-heading" hidden>Ranks</h2><p class="legend" id="ranks-legend"></p><div id="ranks"></div>
<h2 id="models-heading" hidden>Models</h2><div id="models"></div>
<h2>Summary</h2><div id="summary"></div>
<h2>Layers</h2><p class="legend" id="layers-legend"></p><div id="layer-timeline"></div><div id="layers"></div>
<p class="legend" id="roofline-legend"></p><div id="roofline"></div>
<h2>Per-core utilization</h2><p class="legend" id="heatmap-legend"></p><div id="heatmap-scale-box"></div>
<div id="heatmap" class="groups"></div>
<h2>Achieved DMA bandwidth over time</h2><div id="bandwidth"></div><div id="bandwidth-legend"></div>
<h2>Request sizes</h2><div id="histogram"></div>
<h2>Slowest requests</h2><div id="slowest"></div>
<h2>Faults and lint warnings</h2><div id="issues"></div>
<h2 id="check-heading" hidden>Checking reports</h2><p class="legend" id="check-legend"></p><div id="check"></div>
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
    return (i === 0 || b >= 100 ? b.toFixed(0) : b.toPrecision(3)) + " " + u[i];
  }
  function gbs(x) { return (x / 1e9).toPrecision(3) + " GB/s"; }
  // A chart that scales with the page: drawn in a W x H coordinate box, shown at the page's width.
  function chart(id, W, H) {
    return svg("svg", {viewBox: "0 0 " + W + " " + H, width: "100%", id: id, role: "img", "class": "chart",
                       preserveAspectRatio: "xMinYMin meet"});
  }
  // Round tick values (1, 2 or 5 times a power of ten) from 0 to at most max.
  function ticks(max, count) {
    if (!(max > 0)) return [0];
    const raw = max / count, p = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map(m => m * p).find(s => s >= raw);
    const out = [];
    for (let v = 0; v <= max * (1 + 1e-9); v += step) out.push(Number(v.toPrecision(12)));
    return out;
  }
  function num(v) { return Number(v.toPrecision(6)).toLocaleString("en-US"); }
  // An x axis of simulated time in microseconds under a plot [x0, x1] x [.., y]; ticks at round values.
  function timeAxis(s, x0, x1, y, endUs) {
    s.appendChild(svg("line", {x1: x0, y1: y, x2: x1, y2: y, stroke: "#444"}));
    ticks(endUs, 6).forEach(t => {
      const x = x0 + (x1 - x0) * t / Math.max(endUs, 1e-12);
      s.appendChild(svg("line", {x1: x, y1: y, x2: x, y2: y + 4, stroke: "#444"}));
      s.appendChild(svg("text", {x: x, y: y + 20, "text-anchor": "middle", "class": "tick"}, num(t) + " us"));
    });
  }
  // Ranges of group numbers: [0,1,2,3,5] -> "cg 0-3, 5".
  function groupList(cgs) {
    const parts = [];
    for (let i = 0; i < cgs.length;) {
      let j = i;
      while (j + 1 < cgs.length && cgs[j + 1] === cgs[j] + 1) j++;
      parts.push(j > i ? cgs[i] + "-" + cgs[j] : String(cgs[i]));
      i = j + 1;
    }
    return "cg " + parts.join(", ");
  }
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
  const what = run.workload ? "workload " + run.workload : run.program ? run.program + " program" : "an unnamed run";
  info.appendChild(el("p", {id: "run-line"}, "arch " + S.arch + " (" + S.core_grid.rows + "x" + S.core_grid.cols +
      " cores per group, " + (S.clock_hz / 1e9) + " GHz), " + what + ": " + num(S.cycles) +
      " cycles = " + (S.seconds * 1e6).toPrecision(4) + " us simulated, " + S.requests + " DMA requests, " +
      bytes(S.bytes) + ", " + gbs(S.bandwidth_bytes_per_second)));
  if (S.fault) {
    info.appendChild(el("p", {class: "fault", id: "fault-banner"}, "The run trapped: the trace is complete up to the fault at cycle " +
        S.fault.cycle + " (cg " + S.fault.cg + ", core " + S.fault.core + ", kernel " + S.fault.kernel + "): " + S.fault.message));
  } else {
    info.appendChild(el("p", {class: "ok"}, "Trace complete."));
  }
  // Checking reports (a run with checking on): one per site, with how often it happened.
  const checks = Array.isArray(S.check) ? S.check : null;
  const checkOccurrences = checks ? checks.reduce((n, r) => n + (r.count || 0), 0) : 0;
  if (checks) {
    info.appendChild(el("p", checks.length ? {class: "check", id: "check-banner"} : {class: "ok", id: "check-banner"},
        checks.length ? "Checking found " + checks.length + " bug site" + (checks.length === 1 ? "" : "s") + " (" +
            checkOccurrences + " occurrence" + (checkOccurrences === 1 ? "" : "s") + "): see Checking reports below."
                      : "Checking was on and found nothing."));
  }
  // Ranks of an MPI run: one bar per rank over the makespan, split into time outside MPI calls, in them and
  // waiting in them, with the busiest core's DMA time as a thin bar under it; then a table.
  if (S.ranks) {
    const R = S.ranks;
    document.getElementById("ranks-heading").hidden = false;
    document.getElementById("ranks-legend").textContent = R.ranks.length + " ranks, makespan " +
        num(R.makespan_cycles) + " cycles. Blue: outside MPI calls (compute, DMA, control core); purple: in MPI " +
        "calls, not waiting; red: waiting for messages or other ranks; orange (thin): the busiest core's DMA time. " +
        "The sections below show rank " + S.detail_rank + " (the slowest).";
    const RW = 960, RL = 70, RR = 40, row = 22, RH = 30 + row * R.ranks.length;
    const rc = chart("ranks-chart", RW, RH);
    const span = Math.max(1, R.makespan_cycles), x = c => RL + (RW - RL - RR) * c / span;
    R.ranks.forEach((r, k) => {
      const y = 4 + k * row;
      rc.appendChild(svg("text", {x: RL - 6, y: y + 12, "text-anchor": "end"}, "rank " + r.rank));
      const parts = [[0, r.chip_cycles, "#4c78a8", "outside MPI"],
                     [r.chip_cycles, r.mpi_cycles - r.mpi_wait_cycles, "#b279a2", "in MPI, not waiting"],
                     [r.chip_cycles + r.mpi_cycles - r.mpi_wait_cycles, r.mpi_wait_cycles, "#e45756", "MPI wait"]];
      parts.forEach(([from, length, color, what]) => {
        if (length <= 0) return;
        const bar = svg("rect", {x: x(from), y: y, width: Math.max(0.5, x(from + length) - x(from)), height: 13,
                                 fill: color, "class": "rank-bar"});
        bar.appendChild(svg("title", {}, "rank " + r.rank + ": " + what + " " + num(length) + " cycles"));
        rc.appendChild(bar);
      });
      const dma = svg("rect", {x: x(0), y: y + 15, width: Math.max(0.5, x(r.dma_busy_cycles) - x(0)), height: 3,
                               fill: "#f58518"});
      dma.appendChild(svg("title", {}, "rank " + r.rank + ": DMA busy " + num(r.dma_busy_cycles) + " cycles"));
      rc.appendChild(dma);
    });
    timeAxis(rc, RL, RW - RR, RH - 26, R.makespan_seconds * 1e6);
    document.getElementById("ranks").appendChild(rc);
    // Each rank's MPI calls on one time axis: a call is a purple bar over the rank's run (a thin line), its waiting
    // part red over the call.
    document.getElementById("ranks").appendChild(el("p", {class: "legend", id: "rank-timeline-legend"},
        "MPI calls on each rank's clock: purple the call, red the part of it spent waiting for messages or other " +
        "ranks; the thin line is the rank's run. A rank with more than 1000 calls has them merged into 1000 bars, " +
        "each showing its calls' total wait at its end. Hover a bar for the call."));
    const TW = 960, TL = 70, TR = 40, trow = 22, TH = 30 + trow * R.ranks.length;
    const tc = chart("rank-timeline-chart", TW, TH);
    const tx = c => TL + (TW - TL - TR) * c / span;
    R.ranks.forEach((r, k) => {
      const y = 4 + k * trow;
      tc.appendChild(svg("text", {x: TL - 6, y: y + 12, "text-anchor": "end"}, "rank " + r.rank));
      tc.appendChild(svg("line", {x1: tx(0), y1: y + 7, x2: tx(r.cycles), y2: y + 7, stroke: "#4c78a8",
                                  "class": "rank-run"}));
      (r.timeline || []).forEach(([name, begin, end, waitBegin, waitEnd, calls]) => {
        const what = "rank " + r.rank + ": " + name + (calls > 1 && !name.endsWith(" calls") ? " x" + calls : "") +
            ", cycles " + num(begin) + " to " + num(end) + (waitEnd > waitBegin ? ", " + num(waitEnd - waitBegin) +
            " waiting" : "");
        const bar = svg("rect", {x: tx(begin), y: y, width: Math.max(0.5, tx(end) - tx(begin)), height: 14,
                                 fill: "#b279a2", "class": "mpi-call"});
        bar.appendChild(svg("title", {}, what));
        tc.appendChild(bar);
        if (waitEnd > waitBegin) {
          const wait = svg("rect", {x: tx(waitBegin), y: y, width: Math.max(0.5, tx(waitEnd) - tx(waitBegin)),
                                    height: 14, fill: "#e45756", "class": "mpi-wait"});
          wait.appendChild(svg("title", {}, what));
          tc.appendChild(wait);
        }
      });
    });
    timeAxis(tc, TL, TW - TR, TH - 26, R.makespan_seconds * 1e6);
    document.getElementById("ranks").appendChild(tc);
    const share = (part, whole) => whole > 0 ? pct(part / whole) : "-";
    document.getElementById("ranks").appendChild(table("ranks-table",
        ["rank", "cycles", "outside MPI", "DMA busy", "MPI", "MPI wait", "calls"],
        R.ranks.map(r => [r.rank, num(r.cycles), share(r.chip_cycles, r.cycles), share(r.dma_busy_cycles, r.cycles),
                          share(r.mpi_cycles, r.cycles), share(r.mpi_wait_cycles, r.cycles), num(r.mpi_calls)]), 1));
  }
  // Models run together (pipelined or concurrent): a bar per model over the run, and a table.
  if (S.models && S.models.length > 0) {
    document.getElementById("models-heading").hidden = false;
    const MW = 960, ML = 20, MR = 40, row = 22, MH = 30 + row * S.models.length;
    const mc = chart("models-chart", MW, MH);
    document.getElementById("models").appendChild(mc);  // attached first, so names can be measured
    const span = Math.max(1, S.cycles, ...S.models.map(m => m.end)), x = c => ML + (MW - ML - MR) * c / span;
    const colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
    S.models.forEach((m, k) => {
      const y = 4 + k * row, w = Math.max(0.5, x(m.end) - x(m.start));
      const bar = svg("rect", {x: x(m.start), y: y, width: w, height: 16, fill: colors[k % colors.length],
                               "class": "model-bar"});
      bar.appendChild(svg("title", {}, m.name + ": cycles " + num(m.start) + " to " + num(m.end) + ", " + m.status));
      mc.appendChild(bar);
      const label = svg("text", {x: x(m.start) + 4, y: y + 12, style: "fill: #fff"}, m.name);
      mc.appendChild(label);
      if (label.getComputedTextLength() > w - 8) label.remove();
    });
    timeAxis(mc, ML, MW - MR, MH - 26, span / S.clock_hz * 1e6);
    document.getElementById("models").appendChild(table("models-table",
        ["model", "start", "end", "cycles", "share of the run", "status"],
        S.models.map(m => [m.name, num(m.start), num(m.end), num(m.end - m.start), pct((m.end - m.start) / span),
                           m.status]), 1));
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
    const TW = 960, TH = 64, TL = 20, TR = 30, end = Math.max(1, S.cycles, layers[layers.length - 1].end);
    const tl = chart("layer-timeline-chart", TW, TH);
    const endUs = end / S.clock_hz * 1e6;
    document.getElementById("layer-timeline").appendChild(tl);  // attached first, so labels can be measured
    layers.forEach((l, index) => {
      const x = TL + (TW - TL - TR) * l.start / end, w = Math.max(1, (TW - TL - TR) * l.cycles / end);
      const r = svg("rect", {x: x, y: 4, width: w, height: 24, fill: boundColor[l.bound] || "#888", stroke: "#fff",
                             "stroke-width": 0.5, "class": "layer-bar"});
      r.appendChild(svg("title", {}, l.name + " (" + l.type + "): " + l.cycles + " cycles, " + l.bound + "-bound, " +
          bytes(l.dma_bytes) + " DMA, " + pct(l.peak_fraction) + " of peak"));
      tl.appendChild(r);
      // Inside its bar, the first of these that fits: the layer's name, its last path part, its type, its row.
      const short = l.name.split("+")[0].split("/").filter(p => p).pop() || l.name;
      const label = svg("text", {x: x + 3, y: 20, "class": "layer-label", style: "fill: #fff"});
      tl.appendChild(label);
      const fits = [l.name, short, l.type, "#" + (index + 1)].find(t => {
        label.textContent = t;
        return label.getComputedTextLength() <= w - 6;
      });
      if (fits === undefined) label.remove();
    });
    timeAxis(tl, TL, TW - TR, 32, endUs);

    document.getElementById("layers").appendChild(table("layers-table",
        ["#", "layer", "type", "start", "cycles", "share", "bound", "DMA bytes", "peak", "ldm", "flop/B", "roofline"],
        layers.map((l, index) => [index + 1, l.name, l.type, l.start, l.cycles, pct(l.cycles / end), l.bound, bytes(l.dma_bytes),
                         pct(l.peak_fraction), l.ldm_high_water == null ? "-" : bytes(l.ldm_high_water),
                         l.arithmetic_intensity == null ? "-" : l.arithmetic_intensity.toPrecision(3),
                         l.roofline_fraction == null ? "-" : pct(l.roofline_fraction) + " " + l.roofline_limit]),
        3));
  }
  // The roofline: each layer with flops and DMA bytes at its arithmetic intensity (x) and achieved flop rate (y),
  // both on log scales, under the machine's roof (the DMA slope up to the ridge, then peak flops).
  const roof = S.roofline;
  const placed = layers.filter(l => l.arithmetic_intensity > 0 && l.cycles > 0).map(l => ({l: l,
      ai: l.arithmetic_intensity, rate: l.arithmetic_intensity * l.dma_bytes * S.clock_hz / l.cycles}));
  if (roof && roof.peak_flops_per_second > 0 && placed.length > 0) {
    const bw = roof.peak_dma_bytes_per_second;  // null: the timing model sets no bandwidth bound
    const lg = Math.log10, peak = roof.peak_flops_per_second;
    const ais = placed.map(p => p.ai).concat(bw ? [peak / bw] : []);
    const x0 = Math.floor(lg(Math.min(...ais))), x1 = Math.max(x0 + 1, Math.ceil(lg(Math.max(...ais)) + 0.3));
    const y1 = Math.ceil(lg(peak) + 0.2);
    const y0 = Math.max(0, Math.min(y1 - 1, Math.floor(lg(Math.min(...placed.map(p => p.rate))))));
    const RW = 960, RH = 320, RL = 96, RR = 40, RT = 12, RB = 44;
    const px = v => RL + (RW - RL - RR) * (lg(v) - x0) / (x1 - x0);
    const py = v => RH - RB - (RH - RB - RT) * (lg(v) - y0) / (y1 - y0);
    const rc = chart("roofline-chart", RW, RH);
    // 10^e flop/s with an SI prefix: 1, 10 or 100 of a unit (y0 >= 0: no layer runs under a flop per second).
    const rateLabel = e => 10 ** (e % 3) + " " + (["", "k", "M", "G", "T", "P", "E"][Math.floor(e / 3)] || "?") +
        "flop/s";
    for (let e = x0; e <= x1; e++) {
      rc.appendChild(svg("line", {x1: px(10 ** e), y1: RT, x2: px(10 ** e), y2: RH - RB, stroke: "#e4e4e4"}));
      rc.appendChild(svg("text", {x: px(10 ** e), y: RH - RB + 20, "text-anchor": "middle", "class": "tick"},
                         num(10 ** e)));
    }
    for (let e = y0; e <= y1; e++) {
      rc.appendChild(svg("line", {x1: RL, y1: py(10 ** e), x2: RW - RR, y2: py(10 ** e), stroke: "#e4e4e4"}));
      rc.appendChild(svg("text", {x: RL - 6, y: py(10 ** e) + 4, "text-anchor": "end", "class": "tick"},
                         rateLabel(e)));
    }
    rc.appendChild(svg("text", {x: (RL + RW - RR) / 2, y: RH - 6, "text-anchor": "middle"},
                       "arithmetic intensity (flop per DMA byte)"));
    const xs = [10 ** x0, 10 ** x1];
    const roofAt = x => bw ? Math.min(peak, bw * x) : peak;
    const pts = (bw ? [xs[0], peak / bw, xs[1]] : xs).filter(x => x >= xs[0] && x <= xs[1])
        .map(x => [px(x), py(Math.max(roofAt(x), 10 ** y0))]);
    rc.appendChild(svg("polyline", {points: pts.map(p => p[0].toFixed(1) + "," + p[1].toFixed(1)).join(" "),
                                    fill: "none", stroke: "#444", "stroke-width": 1.5, "class": "roof-line"}));
    placed.forEach(p => {
      const c = svg("circle", {cx: px(p.ai), cy: py(p.rate), r: 4, fill: boundColor[p.l.bound] || "#888",
                               "fill-opacity": 0.8, "class": "roof-point"});
      c.appendChild(svg("title", {}, p.l.name + " (" + p.l.type + "): " + p.ai.toPrecision(3) + " flop/B, " +
          num(p.rate / 1e9) + " Gflop/s, " + pct(p.l.roofline_fraction) + " of its roof (" +
          p.l.roofline_limit + ")"));
      rc.appendChild(c);
    });
    document.getElementById("roofline").appendChild(rc);
    document.getElementById("roofline-legend").textContent = "Roofline: each layer with flops and DMA at its " +
        "arithmetic intensity and achieved flop rate (colored by bound, as the timeline); the line is the " +
        "machine's roof: peak DMA bandwidth " + (bw ? gbs(bw) : "unbounded") + " up to the ridge, then peak " +
        num(peak / 1e9) + " Gflop/s. Hover a point for its layer.";
  }
  // Heat maps: one core grid per group
  document.getElementById("heatmap-legend").textContent =
      "Color: DMA-busy fraction (union of the core's request spans / group cycles), white 0% to dark blue 100% (scale above); grey: a core that moved nothing. " +
      (S.run_stats ? "Tooltips add busy and waiting fractions from stats.json." : "No stats.json: busy/waiting unknown.");
  const cell = 26, rows = S.core_grid.rows, cols = S.core_grid.cols;
  function heatColor(v) {
    return "rgb(" + Math.round(255 - 225 * v) + "," + Math.round(255 - 175 * v) + "," + Math.round(255 - 55 * v) + ")";
  }
  // The colour scale: a gradient from 0% to 100% DMA-busy.
  const scale = chart("heatmap-scale", 320, 34);
  scale.style.maxWidth = "320px";
  const grad = svg("linearGradient", {id: "heat-gradient"});
  [0, 0.25, 0.5, 0.75, 1].forEach(v => grad.appendChild(svg("stop", {offset: v, "stop-color": heatColor(v)})));
  const defs = svg("defs");
  defs.appendChild(grad);
  scale.appendChild(defs);
  scale.appendChild(svg("rect", {x: 20, y: 2, width: 280, height: 12, fill: "url(#heat-gradient)", stroke: "#999"}));
  [0, 0.5, 1].forEach(v => scale.appendChild(svg("text", {x: 20 + 280 * v, y: 28, "text-anchor": "middle"},
                                                  (100 * v) + "%")));
  document.getElementById("heatmap-scale-box").appendChild(scale);
  // The trapped core and the cores with checking reports (their first occurrences) are outlined.
  const trapped = S.fault && typeof S.fault === "object" ? S.fault.cg + ":" + S.fault.core : null;
  const reportsAt = {};
  (checks || []).forEach(r => { const k = r.cg + ":" + r.core; reportsAt[k] = (reportsAt[k] || 0) + 1; });
  if (trapped || checks && checks.length) {
    document.getElementById("heatmap-legend").textContent += " Outlined: " +
        (trapped ? "red, the core that trapped (cg " + S.fault.cg + " core " + S.fault.core + ")" : "") +
        (trapped && checks && checks.length ? "; " : "") +
        (checks && checks.length ? "orange, cores where a checking report first occurred" : "") + ".";
  }
  const heat = document.getElementById("heatmap");
  S.groups.forEach(g => {
    const box = el("div", {class: "group"});
    const w = cols * cell + 4, h = rows * cell + 4;
    const s = svg("svg", {width: w, height: h, id: "heatmap-cg" + g.cg, role: "img"});
    const byCore = {};
    g.cores.forEach(c => { byCore[c.row * cols + c.col] = c; });
    // Every core of the grid: a core that moved nothing is drawn grey, so an idle group still shows its grid.
    for (let row = 0; row < rows; row++) {
      for (let col = 0; col < cols; col++) {
        const c = byCore[row * cols + col];
        const v = c ? Math.max(0, Math.min(1, c.dma_busy_fraction || 0)) : 0;
        const key = g.cg + ":" + (row * cols + col);
        const isTrapped = key === trapped, reports = reportsAt[key] || 0;
        const mark = isTrapped ? " trapped" : reports ? " checked" : "";
        const r = svg("rect", {x: 2 + col * cell, y: 2 + row * cell, width: cell - 4, height: cell - 4,
                               fill: c ? heatColor(v) : "#eeeeee", stroke: isTrapped ? "#d00" : reports ? "#e80" : "#999",
                               "stroke-width": mark ? 3 : 1, "class": (c ? "heat-cell" : "heat-cell idle") + mark});
        r.appendChild(svg("title", {}, "cg " + g.cg + " core " + row + "," + col + ": " + (c ? c.requests + " requests, " +
            bytes(c.get_bytes + c.put_bytes) + ", DMA-busy " + pct(c.dma_busy_fraction) + ", busy " + pct(c.busy_fraction) +
            ", waiting " + pct(c.waiting_fraction) : "no DMA requests") + (isTrapped ? "; TRAPPED here" : "") +
            (reports ? "; first occurrence of " + reports + " checking report" + (reports === 1 ? "" : "s") : "")));
        s.appendChild(r);
      }
    }
    box.appendChild(s);
    box.appendChild(el("div", {}, "cg " + g.cg + (g.requests === 0 ? " (no DMA)" : "")));
    heat.appendChild(box);
  });
  // Bandwidth over time: one line per distinct series (groups that moved the same bytes at the same times share
  // one line and one legend entry, rather than hiding each other); the legend sits under the chart.
  const W = 960, H = 260, L = 76, R = 40, T = 12, B = 34;
  const bw = chart("bandwidth-chart", W, H);
  const bin = S.bin_cycles;
  let peak = 0, nbins = 1;
  S.groups.forEach(g => { nbins = Math.max(nbins, g.bandwidth_over_time.length);
                          g.bandwidth_over_time.forEach(v => { peak = Math.max(peak, v); }); });
  const yTicks = ticks(peak / 1e9, 4);
  const top = Math.max(yTicks[yTicks.length - 1] * 1e9, peak, 1);
  const colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];
  bw.appendChild(svg("line", {x1: L, y1: T, x2: L, y2: H - B, stroke: "#444"}));
  yTicks.forEach(t => {
    const y = H - B - (H - B - T) * t * 1e9 / top;
    bw.appendChild(svg("line", {x1: L - 4, y1: y, x2: W - R, y2: y, stroke: t === 0 ? "#444" : "#e4e4e4"}));
    bw.appendChild(svg("text", {x: L - 7, y: y + 4, "text-anchor": "end", "class": "tick"}, num(t) + " GB/s"));
  });
  timeAxis(bw, L, W - R, H - B, nbins * bin / S.clock_hz * 1e6);
  const series = new Map();
  S.groups.forEach(g => {
    const key = g.bandwidth_over_time.join(",");
    if (!series.has(key)) series.set(key, {values: g.bandwidth_over_time, cgs: []});
    series.get(key).cgs.push(g.cg);
  });
  const legend = document.getElementById("bandwidth-legend");
  legend.className = "legend";
  legend.id = "bandwidth-legend";
  let i = 0;
  series.forEach(sr => {
    const color = colors[i++ % colors.length];
    const pts = sr.values.map((v, k) =>
        (L + (W - L - R) * (k + 0.5) / nbins).toFixed(1) + "," + (H - B - (H - B - T) * v / top).toFixed(1));
    const line = svg("polyline", {points: pts.join(" "), fill: "none", stroke: color, "stroke-width": 1.5, "class": "bw-line"});
    line.appendChild(svg("title", {}, groupList(sr.cgs)));
    bw.appendChild(line);
    const key = el("span", {class: "key"});
    key.appendChild(el("span", {class: "swatch", style: "background:" + color}));
    key.appendChild(document.createTextNode(groupList(sr.cgs)));
    legend.appendChild(key);
  });
  document.getElementById("bandwidth").appendChild(bw);
  // Request-size histogram
  const hist = S.size_histogram;
  const HW = 960, HH = 220, HB = 40;
  const hs = chart("histogram-chart", HW, HH);
  document.getElementById("histogram").appendChild(hs);  // attached first, so labels can be measured
  let lastLabelEnd = -Infinity;
  let most = 1;
  hist.forEach(b => { most = Math.max(most, b.requests); });
  const barW = hist.length ? Math.min(80, (HW - 20) / hist.length) : 10;
  hist.forEach((b, i) => {
    const hgt = (HH - HB - 20) * b.requests / most;
    const x = 10 + i * barW;
    const r = svg("rect", {x: x + 2, y: HH - HB - hgt, width: barW - 4, height: hgt, fill: "#4c78a8", "class": "hist-bar"});
    r.appendChild(svg("title", {}, bytes(b.min) + " .. " + bytes(b.max) + ": " + b.requests + " requests, " + bytes(b.bytes)));
    hs.appendChild(r);
    // Size labels under the bars, skipping one that would run into the last one drawn.
    const size = svg("text", {x: x + 2, y: HH - HB + 14}, bytes(b.min));
    hs.appendChild(size);
    const sizeEnd = x + 2 + size.getComputedTextLength();
    if (x + 2 < lastLabelEnd + 6) size.remove(); else lastLabelEnd = sizeEnd;
    const count = svg("text", {x: x + barW / 2, y: HH - HB - hgt - 4, "text-anchor": "middle"}, num(b.requests));
    hs.appendChild(count);
    if (count.getComputedTextLength() > barW) count.remove();
  });
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
  if (checks) {
    document.getElementById("check-heading").hidden = false;
    document.getElementById("check-legend").textContent = checks.length
        ? "One row per bug site (docs/checking.md), its first occurrence and how often it happened; the message " +
          "names the DMA requests, buffers and, for athread code, the source line."
        : "Checking was on: no reports.";
    const model = checks.some(r => r.model);
    document.getElementById("check").appendChild(table("check-table",
        ["kind"].concat(model ? ["model"] : [], ["kernel", "count", "cg", "core", "cycle", "message"]),
        checks.map(r => [r.kind].concat(model ? [r.model || "-"] : [], [r.kernel, r.count, r.cg,
            Math.floor(r.core / cols) + "," + (r.core % cols), r.cycle, r.message])), model ? 3 : 2));
  }
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
