#!/usr/bin/env bash
# GPU benchmark (run by hand on a machine with an OpenCL GPU, e.g. through a bundle made by deploy/bundle --all):
# tracker + agent on the GPU platform, tunefleet tunes GEMM 2048³ / 4096³ and ResNet-18 conv layers with a time
# budget each, beside cuBLAS / cuDNN (PyTorch, TF32 off) and CLBlast's tuner on the same device.
#   usage: bench/gpu_vs_vendor.sh BIN_DIR OUT_DIR ; env: PLATFORM (default 1), GEMM_BUDGET, CONV_BUDGET,
#          CLBLAST_BUDGET (seconds), CLBLAST (path of clblast_tuner_xgemm, optional)
set -uo pipefail
BIN=$1; OUT=$2; mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
PLATFORM=${PLATFORM:-}
GEMM_BUDGET=${GEMM_BUDGET:-100}; CONV_BUDGET=${CONV_BUDGET:-120}; CLBLAST_BUDGET=${CLBLAST_BUDGET:-100}
CONVS=${CONVS:-"1,64,56,56,64,3,3,1,1 1,256,14,14,256,3,3,1,1 1,128,28,28,256,1,1,2,0"}
PORT=9391
DB=$OUT/gpu.db
pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null; done; wait 2>/dev/null' EXIT
"$BIN/tunefleet-tracker" --host 127.0.0.1 --port $PORT >"$OUT/tracker.log" 2>&1 & pids+=($!)
"$BIN/tunefleet-agent" --list-devices >"$OUT/devices.txt" 2>&1
# Default: the first platform whose name says NVIDIA, AMD, Intel GPU, ... (any "GPU" device), else 0.
[ -n "$PLATFORM" ] || PLATFORM=$(awk '/^platform/ {p=$2; sub(":","",p)} /\[GPU/ {print p; exit}' "$OUT/devices.txt")
PLATFORM=${PLATFORM:-0}
"$BIN/tunefleet-agent" --tracker 127.0.0.1:$PORT --key gpu --platform "$PLATFORM" --device 0 >"$OUT/agent.log" 2>&1 & pids+=($!)
for _ in $(seq 1 100); do "$BIN/tunefleet" query --json --rpc-tracker 127.0.0.1:$PORT 2>/dev/null | grep -q '"gpu"' && break; sleep 0.3; done
"$BIN/tunefleet" query --rpc-tracker 127.0.0.1:$PORT | tee "$OUT/query.txt"

tune() {  # name, budget, task args...
  local name=$1 budget=$2; shift 2
  local t0=$(date +%s.%N)
  "$BIN/tunefleet" tune --rpc-tracker 127.0.0.1:$PORT --rpc-key gpu "$@" --trials 100000 --time-budget "$budget" \
    --db "$DB" --number 10 --repeat 3 --batch 32 --timeout 30 >"$OUT/tune-$name.log" 2>&1
  echo "$name: $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s" >>"$OUT/wall.txt"
}
tune gemm2048 "$GEMM_BUDGET" --task gemm:2048,2048,2048
tune gemm4096 "$GEMM_BUDGET" --task gemm:4096,4096,4096
conv_args=(); for c in $CONVS; do conv_args+=(--task "conv2d:$c"); done
tune conv "$CONV_BUDGET" "${conv_args[@]}"
"$BIN/tunefleet" best --db "$DB" >"$OUT/best.txt" 2>&1
"$BIN/tunefleet" export --db "$DB" --format csv -o "$OUT/records.csv" >/dev/null 2>&1
python3 - "$DB" >"$OUT/summary.txt" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = """SELECT t.spec, p.name, count(*), sum(r.status=0),
              max(CASE WHEN r.status=0 THEN t.flops/r.mean_cost/1e9 END), max(r.timestamp)-min(r.timestamp)
       FROM records r JOIN tasks t ON t.id=r.task_id JOIN templates p ON p.id=r.template_id GROUP BY t.spec, p.name"""
for spec, tmpl, n, ok, best, span in db.execute(q):
    print(f"tunefleet {spec} [{tmpl}] trials {n} ok {ok} best {best or 0:.1f} GFLOPS over {span:.0f} s")
PY
python3 "$HERE/torch_reference.py" $CONVS >"$OUT/vendor.txt" 2>&1
if [ -n "${CLBLAST:-}" ]; then
  t0=$(date +%s.%N)
  (cd "$OUT" && timeout "$CLBLAST_BUDGET" "$CLBLAST" -platform "$PLATFORM" -device 0 -m 2048 -n 2048 -k 2048 -precision 32 >clblast.log 2>&1)
  echo "clblast2048: $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s (timeout $CLBLAST_BUDGET)" >>"$OUT/wall.txt"
fi
cat "$OUT/summary.txt" "$OUT/vendor.txt" "$OUT/wall.txt"
grep -E "GFLOPS" "$OUT/clblast.log" 2>/dev/null | tail -3
