#!/usr/bin/env bash
# Renders a `tunefleet report` HTML page in headless Chromium and screenshots it to PNG, to check by eye that the
# page (inline SVG charts, tables) displays in a real browser. No network is used: the page is self-contained and
# the browser is started with networking features off.
#
#   tests/render_report.sh REPORT.html OUT.png [WIDTHxHEIGHT]
#   tests/render_report.sh --db TUNE.db OUT.png [WIDTHxHEIGHT]   (runs `tunefleet report` first; TUNEFLEET=path)
#
# Needs Debian's `chromium` (apt-get install -y chromium). Exits 2 on bad usage, 1 when rendering fails.
set -euo pipefail

usage() { echo "usage: $0 (REPORT.html | --db TUNE.db) OUT.png [WIDTHxHEIGHT]" >&2; exit 2; }
[[ $# -ge 2 ]] || usage

html=""
if [[ "$1" == "--db" ]]; then
  [[ $# -ge 3 ]] || usage
  db="$2"; shift 2
  tunefleet="${TUNEFLEET:-$(dirname "$0")/../build/bin/tunefleet}"
  [[ -x "$tunefleet" ]] || { echo "$0: error: $tunefleet is not built (set TUNEFLEET=path)" >&2; exit 2; }
  html="$(mktemp --suffix=.html)"
  trap 'rm -f "$html"' EXIT
  "$tunefleet" report --db "$db" -o "$html"
else
  html="$1"; shift
fi
out="$1"
size="${2:-1280x2400}"
[[ -f "$html" ]] || { echo "$0: error: $html: no such file" >&2; exit 2; }
[[ "$size" =~ ^[0-9]+x[0-9]+$ ]] || { echo "$0: error: size '$size' is not WIDTHxHEIGHT" >&2; exit 2; }

browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null; then browser="$b"; break; fi
done
[[ -n "$browser" ]] || { echo "$0: error: no chromium found (apt-get install -y chromium)" >&2; exit 1; }

profile="$(mktemp -d)"
cleanup() { rm -rf "$profile"; [[ "${db:-}" ]] && rm -f "$html"; return 0; }
trap cleanup EXIT
abs="$(cd "$(dirname "$html")" && pwd)/$(basename "$html")"
# --no-sandbox: CI containers run as root, where Chromium's sandbox refuses to start.
"$browser" --headless --disable-gpu --no-sandbox --hide-scrollbars --user-data-dir="$profile" \
  --disable-background-networking --disable-component-update --no-first-run \
  --window-size="${size/x/,}" --screenshot="$out" "file://$abs" >/dev/null 2>&1 || true
[[ -s "$out" ]] || { echo "$0: error: $browser wrote no screenshot for $html" >&2; exit 1; }
echo "$out"
