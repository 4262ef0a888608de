#!/usr/bin/env bash
# A short check of the tracker, agents and tuner on a lent GPU (bench/device_bundle.sh's bundle; nothing installed):
# a tracker and 2 agents of key h200 on the first NVIDIA platform, then a GEMM tune on both devices, a model tune
# with one agent killed (SIGKILL) mid-run and started again, its resume, the model's tasks tuned from a task file
# (tasks --specs, tune --task-file), the status page's GET and HEAD, a tune stopped by SIGINT mid-batch, and
# --early-stopping on a random search and on a unit whose every job fails (a 1 ms --timeout). The logs, the tuning
# logs and summary.txt go to OUT; summary.txt is printed at the end.
#   usage: bench/gpu_head_check.sh DIST_DIR OUT   (with the device tool: bash bench/gpu_head_check.sh dist $OUT)
set -u
D=${1:?usage: bench/gpu_head_check.sh DIST_DIR OUT}; OUT=${2:?usage: bench/gpu_head_check.sh DIST_DIR OUT}
source "$(dirname "$0")/require_binaries.sh"
require_binaries "$D" tunefleet tunefleet-tracker tunefleet-agent
P=127.0.0.1:9190; S=$OUT/summary.txt
mkdir -p "$OUT"

source "$(dirname "$0")/local_fleet.sh"  # log_records
since() { python3 -c "import sys, time; print(round(time.time() - float(sys.argv[1]), 1))" "$1"; }
tune() { "$D/tunefleet" tune --rpc-tracker "$P" --rpc-key h200 "$@"; }

"$D/tunefleet-agent" --list-devices >"$OUT/devices.txt" 2>&1
PLAT=$(grep -i nvidia "$OUT/devices.txt" | head -1 | grep -o -E '^platform [0-9]+' | grep -o -E '[0-9]+')
echo "platform ${PLAT:=0}" >>"$S"
"$D/tunefleet-tracker" --host 127.0.0.1 --port 9190 --http-port 9191 >"$OUT/tracker.log" 2>&1 &
TRACKER=$!
sleep 1
agent() { "$D/tunefleet-agent" --tracker "$P" --key h200 --platform "$PLAT" >>"$OUT/agent$1.log" 2>&1 & echo $!; }
A1=$(agent 1); A2=$(agent 2)
sleep 3
"$D/tunefleet" query --rpc-tracker "$P" >>"$S" 2>&1
python3 - >>"$S" 2>&1 <<'PY'
import http.client
for method in ("GET", "HEAD"):
    c = http.client.HTTPConnection("127.0.0.1", 9191, timeout=5)
    c.request(method, "/metrics")
    r = c.getresponse()
    print("status page", method, r.status, "Content-Length", r.getheader("Content-Length"), "body", len(r.read()))
PY

t0=$(date +%s.%N)
tune --task gemm:1024,1024,1024 --trials 64 --devices 2 --batch 16 --db "$OUT/gemm.db" >"$OUT/gemm.out" 2>&1
echo "gemm rc $? wall $(since "$t0") s" >>"$S"
tail -3 "$OUT/gemm.out" >>"$S"

tune models/tiny_resnet.onnx --trials 120 --devices 2 --batch 16 --device-wait 60 --db "$OUT/model.db" \
  >"$OUT/model.out" 2>&1 &
T=$!
for _ in $(seq 1 600); do [ "$(log_records "$OUT/model.db")" -ge 40 ] && break; sleep 0.1; done
echo "killing agent 2 at $(log_records "$OUT/model.db") records" >>"$S"
kill -9 "$A2"; sleep 2; A2=$(agent 2)
wait "$T"; echo "model rc $?" >>"$S"
tail -4 "$OUT/model.out" >>"$S"
tune models/tiny_resnet.onnx --trials 150 --devices 2 --batch 16 --db "$OUT/model.db" >"$OUT/resume.out" 2>&1
echo "resume rc $?" >>"$S"
grep -E "resume:" "$OUT/resume.out" >>"$S"
python3 - "$OUT/model.db" >>"$S" 2>&1 <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print("records, distinct units x configs, ok:", c.execute(
    "SELECT count(*), count(DISTINCT task_id || '/' || template_id || '/' || device_id || '/' || config_index), "
    "sum(status = 0) FROM records").fetchone())
print("sessions:", c.execute("SELECT state, count(*) FROM sessions GROUP BY state").fetchall())
PY

# A model's tasks as a task file (tasks --specs), tuned without the model.
"$D/tunefleet" tasks models/tiny_resnet.onnx --specs >"$OUT/tasks.txt" 2>"$OUT/tasks.err"
tune --task-file "$OUT/tasks.txt" --trials 64 --devices 2 --batch 8 --db "$OUT/taskfile.db" >"$OUT/taskfile.out" 2>&1
echo "task file rc $? ($(grep -c -v '^#' "$OUT/tasks.txt") tasks listed)," \
  "records $(log_records "$OUT/taskfile.db")" >>"$S"
tail -2 "$OUT/taskfile.out" >>"$S"

# Started directly, not through tune(): a background shell function is a subshell, which ignores SIGINT (job
# control is off in a script) and so would never pass it on.
"$D/tunefleet" tune --rpc-tracker "$P" --rpc-key h200 --task gemm:512,512,512 --trials 400 --batch 8 --number 50 \
  --repeat 10 --db "$OUT/int.db" >"$OUT/int.out" 2>&1 &
T=$!
for _ in $(seq 1 600); do [ "$(log_records "$OUT/int.db")" -ge 8 ] && break; sleep 0.1; done
kill -INT "$T"; t0=$(date +%s.%N); wait "$T"
echo "sigint rc $? after $(since "$t0") s, $(log_records "$OUT/int.db") records" >>"$S"
tail -1 "$OUT/int.out" >>"$S"

tune --task gemm:256,256,256 --tuner random --trials 300 --batch 4 --early-stopping 8 --db "$OUT/es.db" \
  >"$OUT/es.out" 2>&1
echo "early stopping rc $? records $(log_records "$OUT/es.db")" >>"$S"
grep "stopped early" "$OUT/es.out" >>"$S"
tune --task gemm:256,256,256 --trials 40 --batch 4 --timeout 0.001 --early-stopping 6 --db "$OUT/esfail.db" \
  >"$OUT/esfail.out" 2>&1
echo "every job failing: rc $? (1: no trial succeeded) records $(log_records "$OUT/esfail.db")" >>"$S"
grep "stopped early" "$OUT/esfail.out" >>"$S"

# The job the SIGINT stopped is counted as cancelled, not as a job done nor a run timeout.
python3 - >>"$S" 2>&1 <<'PY'
import http.client
c = http.client.HTTPConnection("127.0.0.1", 9191, timeout=5)
c.request("GET", "/metrics")
for line in c.getresponse().read().decode().splitlines():
    if line.startswith(("tunefleet_jobs_cancelled_total", "tunefleet_jobs_done_total",
                        'tunefleet_job_results_total{status="run_timeout"}')):
        print("metrics:", line)
PY

kill -TERM "$A1" "$A2"; sleep 1; kill -TERM "$TRACKER"; wait 2>/dev/null
echo "tracker warnings and errors: $(grep -c -i -E 'warn|error' "$OUT/tracker.log")" >>"$S"
cat "$S"
