#!/usr/bin/env bash
# Regenerates docs/img/pipeline-lstm-2-3-2.png (docs/benchmarks.md, "Multi-model pipelining"): the three example
# LSTMs of examples/pipeline on sw26010, run sequentially and pipelined; their OUT/schedule.svg pictures stacked in
# one page and screenshot by headless chromium. Usage: scripts/make_pipeline_figure.sh [LDMSIM_BINARY] [OUT.png]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ldmsim=${1:-build/tools/ldmsim}
png=${2:-docs/img/pipeline-lstm-2-3-2.png}
[ -x "$ldmsim" ] || { echo "no ldmsim binary at $ldmsim; pass it as the first argument" >&2; exit 2; }
command -v chromium >/dev/null || { echo "chromium is required (apt-get install -y chromium)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$ldmsim" run examples/pipeline/*.json --arch sw26010 -q --out "$work/sequential" >/dev/null
"$ldmsim" run examples/pipeline/*.json --arch sw26010 --concurrent -q --out "$work/pipelined" >/dev/null
height() { sed -n 's/^<svg [^>]* height="\([0-9]*\)".*/\1/p' "$1" | head -1; }
total=$(($(height "$work/sequential/schedule.svg") + $(height "$work/pipelined/schedule.svg")))
{
  echo '<!DOCTYPE html><html><body style="margin:0; line-height:0">'
  cat "$work/sequential/schedule.svg" "$work/pipelined/schedule.svg"
  echo '</body></html>'
} >"$work/page.html"
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$work/profile" --hide-scrollbars --window-size="1090,$total" \
  --screenshot="$work/shot.png" "file://$work/page.html" 2>/dev/null
cp "$work/shot.png" "$png"
echo "wrote $png ($(grep -o '3 models on [^<]*' "$work/sequential/schedule.svg"); $(grep -o '3 models on [^<]*' \
  "$work/pipelined/schedule.svg"))"
