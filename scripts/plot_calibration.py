#!/usr/bin/env python3
"""Plot simulated vs measured STREAM copy over DMA (docs/img/calibration.svg).

Runs the Python module's `ldmsim.stream_sweep` (the sweep of `ldmsim bench stream --sweep`, which the calibration
test checks), once with the
measurement's layout (arrays 80 bytes past a 128-byte boundary) and once 128-byte aligned (a prediction, no
measurement), and draws both against the measured points with the +-15% band, plus the relative error of
every point. The SVG is written by hand, without matplotlib.

    PYTHONPATH=build/python /usr/bin/python3 scripts/plot_calibration.py [--arch sw26010] [--data FILE] [--out FILE]
    scripts/plot_calibration.py --csv sweep.csv [--aligned-csv aligned.csv]   # saved `--sweep --format csv` output
"""
import argparse
import csv
import io
import math
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Plot geometry (pixels).
WIDTH, HEIGHT = 760, 560
LEFT, RIGHT = 80, 30
TOP, MAIN_H = 50, 300
ERR_TOP, ERR_H = 420, 90
MEASURED, SIMULATED, ALIGNED, BAND = "#d62728", "#1f77b4", "#2ca02c", "#1f77b4"


def run_sweep(arch, data, offset):
    try:
        import ldmsim
    except ImportError as e:
        sys.exit(f"plot_calibration: {e} (build the Python module and set PYTHONPATH=build/python, or give --csv)")
    rows = ldmsim.stream_sweep(arch, data=data, offset_bytes=offset)
    return [(r["block_bytes"], r["MBps"], r["measured_MBps"]) for r in rows]


def parse(text):
    rows = csv.DictReader(io.StringIO(text))
    return [(int(r["block_bytes"]), float(r["simulated_MBps"]), float(r["measured_MBps"])) for r in rows]


class Axes:
    """Maps block bytes (log2) and a value range (linear) to pixels."""

    def __init__(self, blocks, top, height, ymin, ymax):
        self.x0, self.x1 = math.log2(min(blocks)) - 0.3, math.log2(max(blocks)) + 0.3
        self.top, self.height, self.ymin, self.ymax = top, height, ymin, ymax

    def x(self, block):
        return LEFT + (math.log2(block) - self.x0) / (self.x1 - self.x0) * (WIDTH - LEFT - RIGHT)

    def y(self, value):
        return self.top + self.height - (value - self.ymin) / (self.ymax - self.ymin) * self.height


def text(x, y, s, size=12, anchor="middle", color="#000", extra=""):
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{color}" {extra}>{s}</text>'


def polyline(points, color, width=2, dash=""):
    pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    d = f' stroke-dasharray="{dash}"' if dash else ""
    return f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="{width}"{d}/>'


def svg(rows, aligned, title):
    blocks = [b for b, _, _ in rows]
    peak = max([s for _, s, _ in rows] + [m for _, _, m in rows] + [s for _, s, _ in aligned]) / 1000
    ymax = math.ceil(peak * 1.15 / 5) * 5
    main = Axes(blocks, TOP, MAIN_H, 0, ymax)
    worst = max(abs(s / m - 1) for _, s, m in rows) * 100
    emax = max(20, math.ceil(worst / 5) * 5)
    err = Axes(blocks, ERR_TOP, ERR_H, -emax, emax)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'font-family="Helvetica, Arial, sans-serif">', f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>',
           text(WIDTH / 2, 24, title, 15, extra='font-weight="bold"')]
    # Grid and axes.
    for b in blocks:
        for ax in (main, err):
            out.append(f'<line x1="{ax.x(b):.1f}" y1="{ax.top}" x2="{ax.x(b):.1f}" y2="{ax.top + ax.height}" '
                       'stroke="#eee"/>')
        label = f"{b // 1024}K" if b >= 1024 and b % 1024 == 0 else b
        out.append(text(main.x(b), ERR_TOP + ERR_H + 18, label, 11))
    for v in range(0, int(ymax) + 1, 5):
        out.append(f'<line x1="{LEFT}" y1="{main.y(v):.1f}" x2="{WIDTH - RIGHT}" y2="{main.y(v):.1f}" stroke="#eee"/>')
        out.append(text(LEFT - 8, main.y(v) + 4, v, 11, "end"))
    for v in (-emax, -15, 0, 15, emax):
        color = "#999" if abs(v) == 15 else "#eee"
        out.append(f'<line x1="{LEFT}" y1="{err.y(v):.1f}" x2="{WIDTH - RIGHT}" y2="{err.y(v):.1f}" stroke="{color}"'
                   + (' stroke-dasharray="4,3"' if abs(v) == 15 else "") + "/>")
        out.append(text(LEFT - 8, err.y(v) + 4, f"{v:+d}%" if v else "0", 11, "end"))
    for ax in (main, err):
        out.append(f'<rect x="{LEFT}" y="{ax.top}" width="{WIDTH - LEFT - RIGHT}" height="{ax.height}" '
                   'fill="none" stroke="#333"/>')
    out.append(text(WIDTH / 2, HEIGHT - 12, "block size (bytes, log scale)", 12))
    for label, mid, size in (("GB/s (STREAM count)", TOP + MAIN_H / 2, 12), ("sim/meas - 1", ERR_TOP + ERR_H / 2, 11)):
        out.append(text(20, mid, label, size, extra=f'transform="rotate(-90 20 {mid})"'))
    # +-15% band around the measurements.
    upper = [(main.x(b), main.y(m * 1.15 / 1000)) for b, _, m in rows]
    lower = [(main.x(b), main.y(m * 0.85 / 1000)) for b, _, m in reversed(rows)]
    pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in upper + lower)
    out.append(f'<polygon points="{pts}" fill="{BAND}" fill-opacity="0.08" stroke="none"/>')
    # Curves.
    if aligned:
        out.append(polyline([(main.x(b), main.y(s / 1000)) for b, s, _ in aligned], ALIGNED, 1.5, "6,4"))
    out.append(polyline([(main.x(b), main.y(s / 1000)) for b, s, _ in rows], SIMULATED))
    for b, s, m in rows:
        out.append(f'<circle cx="{main.x(b):.1f}" cy="{main.y(s / 1000):.1f}" r="3" fill="{SIMULATED}"/>')
        x, y = main.x(b) - 4, main.y(m / 1000) - 4
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="8" height="8" fill="none" stroke="{MEASURED}" '
                   'stroke-width="1.5"/>')
        e = (s / m - 1) * 100
        y0, y1 = err.y(0), err.y(e)
        out.append(f'<rect x="{err.x(b) - 6:.1f}" y="{min(y0, y1):.1f}" width="12" height="{abs(y1 - y0):.1f}" '
                   f'fill="{SIMULATED}"/>')
    # Legend.
    lx, ly = LEFT + 16, TOP + 16
    out.append(f'<rect x="{lx - 4}" y="{ly - 6}" width="8" height="8" fill="none" stroke="{MEASURED}" '
               'stroke-width="1.5"/>')
    out.append(text(lx + 14, ly + 2, "measured (SW26010, 64 CPEs, 80 B offset)", 12, "start"))
    out.append(polyline([(lx - 8, ly + 18), (lx + 8, ly + 18)], SIMULATED))
    out.append(text(lx + 14, ly + 22, "simulated, same layout", 12, "start"))
    out.append(f'<rect x="{lx - 8}" y="{ly + 32}" width="16" height="10" fill="{BAND}" fill-opacity="0.15"/>')
    out.append(text(lx + 14, ly + 42, "measured +-15%", 12, "start"))
    if aligned:
        out.append(polyline([(lx - 8, ly + 58), (lx + 8, ly + 58)], ALIGNED, 1.5, "6,4"))
        out.append(text(lx + 14, ly + 62, "simulated, 128-byte aligned (prediction)", 12, "start"))
    out.append(text(WIDTH - RIGHT - 8, ERR_TOP - 8, f"largest |error| {worst:.1f}%", 11, "end"))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="sw26010")
    parser.add_argument("--data", default=None, help="measurement CSV (default: the built-in SW26010 copy curve)")
    parser.add_argument("--csv", default=None, help="a saved `--sweep --format csv` output instead of running")
    parser.add_argument("--aligned-csv", default=None, help="a saved aligned sweep (with --csv)")
    parser.add_argument("--out", default=os.path.join(REPO, "docs", "img", "calibration.svg"))
    args = parser.parse_args()
    if args.csv:
        rows = parse(open(args.csv).read())
        aligned = parse(open(args.aligned_csv).read()) if args.aligned_csv else []
    else:
        rows = run_sweep(args.arch, args.data, 80)
        aligned = run_sweep(args.arch, args.data, 0)
    if not rows:
        sys.exit("plot_calibration: the sweep produced no rows")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(svg(rows, aligned, f"STREAM copy over DMA on one {args.arch} core group: simulated vs measured"))
    print(f"wrote {args.out} ({len(rows)} points, largest |error| "
          f"{100 * max(abs(s / m - 1) for _, s, m in rows):.1f}%)")


if __name__ == "__main__":
    main()
