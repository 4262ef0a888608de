#!/usr/bin/env bash
# The out-of-memory killer, played by hand, on a real device: a tracker, one agent and a GEMM tune; while the tune
# runs, the agent's worker process is SIGKILLed from outside KILLS times (default 3), each time once 2 more trials
# were recorded since the last kill (so no job is killed twice). Each killed job must be measured again in a new
# worker (the agent logs why), so the log ends with every trial recorded and none of them failed for the kills.
# Prints the summary; the logs go to OUT.
#   usage: bench/worker_kill_check.sh BIN_DIR OUT   (BIN_DIR: build/bin, or a device bundle such as dist)
#   env: PLATFORM_MATCH (nvidia: the first platform whose line matches it, else platform 0), TASK
#        (gemm:512,512,512), TRIALS (48), KILLS (3), PORT (9191: the tracker's, on loopback)
set -u
D=${1:?usage: bench/worker_kill_check.sh BIN_DIR OUT}; OUT=${2:?usage: bench/worker_kill_check.sh BIN_DIR OUT}
source "$(dirname "$0")/require_binaries.sh"
require_binaries "$D" tunefleet tunefleet-tracker tunefleet-agent
TASK=${TASK:-gemm:512,512,512}; TRIALS=${TRIALS:-48}; KILLS=${KILLS:-3}
mkdir -p "$OUT"
PORT=${PORT:-9191}; P=127.0.0.1:$PORT
source "$(dirname "$0")/local_fleet.sh"  # log_records
"$D/tunefleet-agent" --list-devices >"$OUT/devices.txt" 2>&1
PLAT=$(grep -i "${PLATFORM_MATCH:-nvidia}" "$OUT/devices.txt" | head -1 | grep -o -E '^platform [0-9]+' | grep -o -E '[0-9]+')
PLAT=${PLAT:-0}
"$D/tunefleet-tracker" --host 127.0.0.1 --port "$PORT" >"$OUT/tracker.log" 2>&1 &
TRACKER=$!
sleep 1
"$D/tunefleet-agent" --tracker "$P" --key k --platform "$PLAT" >"$OUT/agent.log" 2>&1 &
AGENT=$!
sleep 3
"$D/tunefleet" tune --rpc-tracker "$P" --rpc-key k --task "$TASK" --trials "$TRIALS" --batch 8 --number 20 \
  --repeat 5 --db "$OUT/kill.db" >"$OUT/tune.out" 2>&1 &
T=$!
kills=0; at=6
for _ in $(seq 1 "$KILLS"); do
  at=$((at + 2))
  for _ in $(seq 1 1200); do
    [ "$(log_records "$OUT/kill.db")" -ge "$at" ] && break
    kill -0 "$T" 2>/dev/null || break  # the tune ended (or never started: see OUT/tune.out)
    sleep 0.1
  done
  at=$(log_records "$OUT/kill.db")
  # The worker is the agent's child (the agent binary started with --worker).
  w=$(pgrep -P "$AGENT" -f -- '--worker' | head -1)  # never another agent's worker on a shared host
  if [ -n "$w" ] && kill -KILL "$w" 2>/dev/null; then kills=$((kills + 1)); fi
done
wait "$T"; rc=$?
{
  echo "platform $PLAT; tune rc $rc; workers SIGKILLed: $kills"
  echo "agent lines 'killed by SIGKILL from outside': $(grep -c 'killed by SIGKILL from outside' "$OUT/agent.log")"
  python3 - "$OUT/kill.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print("records, ok, failed with SIGKILL:", c.execute(
    "SELECT count(*), sum(status = 0), sum(message LIKE '%SIGKILL%') FROM records").fetchone())
PY
  tail -2 "$OUT/tune.out"
} | tee "$OUT/summary.txt"
kill "$AGENT" "$TRACKER" 2>/dev/null; wait 2>/dev/null
