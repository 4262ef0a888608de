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
trap cleanup EXIT INT TERM

echo "== tracker on 127.0.0.1:$PORT (log $LOGDIR/tracker.log)"
"$BIN/tunefleet-tracker" --host 127.0.0.1 --port "$PORT" >"$LOGDIR/tracker.log" 2>&1 &
pids+=($!)
echo "== agent on OpenCL platform ${OPENCL_PLATFORM:-0} device ${OPENCL_DEVICE:-0} (log $LOGDIR/agent.log)"
"$BIN/tunefleet-agent" --tracker "127.0.0.1:$PORT" --key "$KEY" \
  --platform "${OPENCL_PLATFORM:-0}" --device "${OPENCL_DEVICE:-0}" >"$LOGDIR/agent.log" 2>&1 &
pids+=($!)

for _ in $(seq 1 100); do
  if "$BIN/tunefleet" query --json --rpc-tracker "127.0.0.1:$PORT" 2>/dev/null | grep -q "\"$KEY\""; then break; fi
  sleep 0.3
done
"$BIN/tunefleet" query --rpc-tracker "127.0.0.1:$PORT"

echo "== tasks of $MODEL"
"$BIN/tunefleet" tasks "$MODEL"
echo "== tuning $MODEL: $TRIALS trials in total, log $DB"
"$BIN/tunefleet" tune "$MODEL" --rpc-tracker "127.0.0.1:$PORT" --rpc-key "$KEY" --trials "$TRIALS" \
  --db "$DB" --number 2 --repeat 2 --batch 4
echo "== best per task"
"$BIN/tunefleet" best --db "$DB"
echo "== results are in $DB (sqlite3 $DB 'SELECT count(*) FROM records')"
