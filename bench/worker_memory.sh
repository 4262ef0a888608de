#!/usr/bin/env bash
# The agent's worker memory over a tune on this machine's OpenCL device (PoCL here): a tracker and one agent (its own
# kernel cache folder), one tune of TASK (default gemm:128,128,128) for TRIALS (default 320) with a fixed seed, the
# worker's resident memory (VmRSS of the agent's child processes) sampled every 2 s. Prints the samples in MB (one in
# eight), the peak, the tune's wall time, and how many jobs found every program of theirs in the worker's compile cache
# (compile time under 20 ms). TUNE_ARGS: more tune arguments (e.g. "--template conv2d_nchwc.image2d --tuner random").
# Run it with two builds one after the other to compare them; xgb plans differ between runs (measured costs vary).
#   usage: bench/worker_memory.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build}/bin
TASK=${TASK:-gemm:128,128,128}
TRIALS=${TRIALS:-320}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source bench/local_fleet.sh
AGENT_ARGS="--pocl-cache-dir $work/cache --pocl-cache-mb 512" start_local_fleet "$BIN" "$work" mem 1 0 0
agent=${FLEET_PIDS[1]}
(
  while kill -0 "$agent" 2>/dev/null; do
    for child in $(pgrep -P "$agent"); do awk '/VmRSS/ {print $2}' "/proc/$child/status" 2>/dev/null || true; done
    sleep 2
  done
) >"$work/rss.txt" &
sampler=$!
start=$(date +%s.%N)
# shellcheck disable=SC2086  # TUNE_ARGS is a list of words
"$BIN/tunefleet" tune --rpc-tracker "$FLEET_ADDR" --rpc-key mem --task "$TASK" --trials "$TRIALS" --seed 1 \
  ${TUNE_ARGS:-} --db "$work/log.db" >"$work/tune.out" 2>&1
wall=$(echo "$(date +%s.%N) - $start" | bc)
stop_local_fleet
wait "$sampler" 2>/dev/null || true
echo "worker RSS samples (MB): $(awk 'NR % 8 == 1 {printf "%d ", $1 / 1024}' "$work/rss.txt")"
peak=$(sort -n "$work/rss.txt" | tail -1 | awk '{print int($1 / 1024)}')
printf 'peak worker RSS %d MB; tune %.1f s; ' "$peak" "$wall"
echo "jobs with every program cached: $(sqlite3 "$work/log.db" \
  'SELECT sum(compile_time < 0.02) || " of " || count(*) FROM records')"
