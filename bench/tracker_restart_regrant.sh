#!/usr/bin/env bash
# How long a run waits, after its tracker comes back, to get its device again: a tracker, one agent and a GEMM tune
# on this machine; the tracker is killed mid-run and started again on the same port after 3 s; prints the time from
# the restart to the run's "available again" line, RUNS times. Run by hand (figures in bench/results/).
#   usage: bench/tracker_restart_regrant.sh BIN_DIR [PORT]   env: RUNS (3), OUT (a temporary folder; the logs)
set -euo pipefail
BIN=$(cd "${1:?usage: $0 BIN_DIR [PORT]}" && pwd)
PORT=${2:-47190}
RUNS=${RUNS:-3}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
for run in $(seq 1 "$RUNS"); do
  rm -f "$OUT"/r.db*
  "$BIN/tunefleet-tracker" --host 127.0.0.1 --port "$PORT" >"$OUT/tracker-$run-a.log" 2>&1 & tracker=$!
  sleep 1
  "$BIN/tunefleet-agent" --tracker "127.0.0.1:$PORT" --key restart >"$OUT/agent-$run.log" 2>&1 & agent=$!
  pids=("$tracker" "$agent")
  sleep 2
  "$BIN/tunefleet" tune --task gemm:256,256,256 --rpc-tracker "127.0.0.1:$PORT" --rpc-key restart \
    --db "$OUT/r.db" --trials 400 --device-wait 120 >"$OUT/tune-$run.log" 2>&1 & tune=$!
  pids+=("$tune")
  sleep 8
  kill -9 "$tracker"; wait "$tracker" 2>/dev/null || true
  sleep 3
  "$BIN/tunefleet-tracker" --host 127.0.0.1 --port "$PORT" >"$OUT/tracker-$run-b.log" 2>&1 & tracker=$!
  pids=("$tracker" "$agent" "$tune")
  start=$(date +%s%N)
  for _ in $(seq 1 600); do grep -q 'available again' "$OUT/tune-$run.log" && break; sleep 0.1; done
  echo "run $run: restart -> device again: $(( ($(date +%s%N) - start) / 1000000 )) ms"
  kill -INT "$tune"; wait "$tune" 2>/dev/null || true
  kill "$agent" "$tracker"; wait "$agent" "$tracker" 2>/dev/null || true
  pids=()
done
echo "logs: $OUT"
