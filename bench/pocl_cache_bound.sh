#!/usr/bin/env bash
# The agent's --pocl-cache-mb on this machine's PoCL: the same random GEMM tune (TRIALS, default 150, of
# gemm:256,256,256, a fixed seed) three times, each into a fresh log and with a fresh kernel cache folder: an agent with
# PoCL's cache in a folder of its own and no bound, one with --pocl-cache-mb MB (default 4), and, for the cost of no
# cache at all, one with POCL_KERNEL_CACHE=0. Prints each run's wall time, the cache folder's size at the end and the
# agent's prune lines.
#   usage: bench/pocl_cache_bound.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build}/bin
TRIALS=${TRIALS:-150}
MB=${MB:-4}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source bench/local_fleet.sh
run() {  # NAME AGENT_ARGS [ENV...]
  local name=$1 args=$2
  shift 2
  mkdir -p "$work/$name"
  (
    [ $# -eq 0 ] || export "$@"
    AGENT_ARGS=$args start_local_fleet "$BIN" "$work/$name" pocl 1 0 0
    local start
    start=$(date +%s.%N)
    "$BIN/tunefleet" tune --rpc-tracker "$FLEET_ADDR" --rpc-key pocl --task gemm:256,256,256 --tuner random \
      --seed 7 --trials "$TRIALS" --db "$work/$name/log.db" >"$work/$name/tune.out" 2>&1
    printf '%s: %.1f s, ' "$name" "$(echo "$(date +%s.%N) - $start" | bc)"
    stop_local_fleet
  )
  echo "cache folder $(du -sk "$work/$name/cache" 2>/dev/null | cut -f1) KB," \
    "records $(log_records "$work/$name/log.db")"
  grep -h "least recently used" "$work/$name"/agent-*.log | sed 's/^\[[^]]*\] \[[^]]*\] \[[^]]*\] /  /' |
    tail -3 || true
}
run unbounded "" POCL_CACHE_DIR="$work/unbounded/cache"
run "bounded-$MB-MB" "--pocl-cache-mb $MB --pocl-cache-dir $work/bounded-$MB-MB/cache"
run no-cache "" POCL_KERNEL_CACHE=0 POCL_CACHE_DIR="$work/no-cache/cache"
