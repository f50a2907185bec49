#!/usr/bin/env bash
# Renders `ldmsim report` for a run directory or trace and takes a PNG screenshot with headless chromium, so a
# person can look at the report. Usage: scripts/report_screenshot.sh RUN_DIR|TRACE [OUT.png] [LDMSIM_BINARY]
set -euo pipefail
input=${1:?usage: $0 RUN_DIR|TRACE [OUT.png] [ldmsim binary]}
png=${2:-report.png}
ldmsim=${3:-$(ls -t build*/tools/ldmsim 2>/dev/null | head -1)}
[ -x "$ldmsim" ] || { echo "no ldmsim binary found; pass it as the third argument" >&2; exit 2; }
command -v chromium >/dev/null || { echo "chromium is required (apt-get install -y chromium)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$ldmsim" report "$input" -o "$work/report.html"
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$work/profile" --hide-scrollbars --window-size=1280,1800 \
  --screenshot="$work/shot.png" "file://$work/report.html" 2>/dev/null
cp "$work/shot.png" "$png"
cp "$work/report.html" "${png%.png}.html"
echo "wrote $png and ${png%.png}.html"
