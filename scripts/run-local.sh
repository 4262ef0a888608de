#!/usr/bin/env bash
# The main job on the embedded default: install what is missing, build, start a tracker and one agent on this
# machine's first OpenCL device on loopback, tune the bundled model into a local SQLite file, print the best
# kernels, and stop what it started.
#   TRIALS (default 120), DB (default tunefleet-demo.db), MODEL (default models/tiny_resnet.onnx),
#   PORT (default: a free port), OPENCL_PLATFORM / OPENCL_DEVICE (default 0 / 0).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
BIN=${BUILD_DIR:-build}/bin
TRIALS=${TRIALS:-120}
DB=${DB:-tunefleet-demo.db}
MODEL=${MODEL:-models/tiny_resnet.onnx}
PORT=${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 9190)}
KEY=local
LOGDIR=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
# SIGINT/SIGTERM end the script at once (the commands run in the background and are waited for, so that the trap is
# not deferred until a long `tune` ends); EXIT stops what it started (a `tune` ends its session as 'interrupted').
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# Runs a command in the background and waits for it: its exit status, or the script's trap at once on a signal.
run() {
  "$@" &
  local pid=$!
  pids+=("$pid")
  wait "$pid"
}

echo "== tracker on 127.0.0.1:$PORT (log $LOGDIR/tracker.log)"
"$BIN/tunefleet-tracker" --host 127.0.0.1 --port "$PORT" >"$LOGDIR/tracker.log" 2>&1 &
pids+=($!)
echo "== agent on OpenCL platform ${OPENCL_PLATFORM:-0} device ${OPENCL_DEVICE:-0} (log $LOGDIR/agent.log)"
"$BIN/tunefleet-agent" --tracker "127.0.0.1:$PORT" --key "$KEY" \
  --platform "${OPENCL_PLATFORM:-0}" --device "${OPENCL_DEVICE:-0}" >"$LOGDIR/agent.log" 2>&1 &
pids+=($!)

tracker_pid=${pids[0]} agent_pid=${pids[1]}
registered=false
for _ in $(seq 1 100); do
  if "$BIN/tunefleet" query --json --rpc-tracker "127.0.0.1:$PORT" 2>/dev/null | grep -q "\"$KEY\""; then
    registered=true
    break
  fi
  # A tracker or agent that could not start (a port in use, no such OpenCL device) says why in its log.
  for who in tracker agent; do
    pid_var=${who}_pid
    if ! kill -0 "${!pid_var}" 2>/dev/null; then
      echo "run-local: error: the $who exited; the end of $LOGDIR/$who.log:" >&2
      tail -n 5 "$LOGDIR/$who.log" >&2
      exit 1
    fi
  done
  sleep 0.3
done
if ! $registered; then
  echo "run-local: error: the agent did not register within 30 s; the end of $LOGDIR/agent.log:" >&2
  tail -n 5 "$LOGDIR/agent.log" >&2
  exit 1
fi
run "$BIN/tunefleet" query --rpc-tracker "127.0.0.1:$PORT"

echo "== tasks of $MODEL"
run "$BIN/tunefleet" tasks "$MODEL"
echo "== tuning $MODEL: $TRIALS trials in total, log $DB"
run "$BIN/tunefleet" tune "$MODEL" --rpc-tracker "127.0.0.1:$PORT" --rpc-key "$KEY" --trials "$TRIALS" \
  --db "$DB" --number 2 --repeat 2 --batch 4
echo "== best per task"
run "$BIN/tunefleet" best --db "$DB"
echo "== results are in $DB (sqlite3 $DB 'SELECT count(*) FROM records')"
