#!/usr/bin/env bash
# A kernel's printf in the agent's log, bounded (agent/output_relay.h): a tracker and one agent (on the first platform
# with a GPU when there is one, else platform 0), a GEMM 64x64x64 program (measure --dump-program) whose kernel
# prints a line per work-item (256 per run) measured with `tunefleet measure --program`; then the agent log's count
# of "kernel output:" lines (at most 16 KiB a minute: 16 KiB / 16-byte lines = 1024) and its lines saying what was
# left out. Logs go to OUT; the summary is printed.
#   usage: bench/printf_check.sh BIN_DIR OUT   (BIN_DIR: build/bin, or a bench/device_bundle.sh bundle)
#   env: PORT (9290: the tracker's, on loopback)
set -u
D=${1:?usage: bench/printf_check.sh BIN_DIR OUT}; OUT=${2:?usage: bench/printf_check.sh BIN_DIR OUT}
source "$(dirname "$0")/require_binaries.sh"
require_binaries "$D" tunefleet tunefleet-tracker tunefleet-agent
PORT=${PORT:-9290}; P=127.0.0.1:$PORT; S=$OUT/printf-summary.txt
mkdir -p "$OUT"
source "$(dirname "$0")/local_fleet.sh"  # first_gpu_platform
"$D/tunefleet-agent" --list-devices >"$OUT/devices.txt" 2>&1
PLAT=$(first_gpu_platform "$OUT/devices.txt")
echo "platform $PLAT" >"$S"
"$D/tunefleet-tracker" --host 127.0.0.1 --port "$PORT" >"$OUT/printf-tracker.log" 2>&1 &
TRACKER=$!
sleep 1
"$D/tunefleet-agent" --tracker "$P" --key printf --platform "$PLAT" >"$OUT/printf-agent.log" 2>&1 &
AGENT=$!
sleep 3
"$D/tunefleet" measure --task gemm:64,64,64 --template gemm.buffer --dump-program 2>/dev/null |
  python3 -c '
import json, sys
p = json.load(sys.stdin)
s = p["launches"][0]["source"]
at = s.index("{", s.index("__kernel")) + 1
p["launches"][0]["source"] = s[:at] + " printf(\"kernel line %03d\\n\", (int)get_local_id(0) + 8 * (int)get_local_id(1) + 64 * (int)(get_group_id(0) + 2 * get_group_id(1))); " + s[at:]
json.dump(p, sys.stdout)' >"$OUT/printf-program.json"
"$D/tunefleet" measure --rpc-tracker "$P" --rpc-key printf --program "$OUT/printf-program.json" \
  >"$OUT/printf-measure.json" 2>"$OUT/printf-measure.err"
echo "measure rc $?: $(head -c 200 "$OUT/printf-measure.json")" >>"$S"
kill "$AGENT"; wait "$AGENT" 2>/dev/null
kill "$TRACKER"; wait "$TRACKER" 2>/dev/null
echo "kernel output lines: $(grep -c 'kernel output: kernel line' "$OUT/printf-agent.log")" >>"$S"
grep -E 'kernel output: (more than|[0-9]+ bytes more)' "$OUT/printf-agent.log" >>"$S"
echo "agent log: $(wc -c <"$OUT/printf-agent.log") bytes" >>"$S"
cat "$S"
