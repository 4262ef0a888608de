#!/usr/bin/env bash
# GPU benchmark (run by hand on a machine with an OpenCL GPU, through a bundle made by bench/device_bundle.sh):
# a tracker and NUM_AGENTS agents on the GPU (one device lock: they build in parallel, run one at a time), then the
# phases named in PHASES, in order, each writing into OUT_DIR:
#   vendor   cuBLAS SGEMM 2048³/4096³ and cuDNN for every conv of CONVS (PyTorch, TF32 off): vendor.txt
#   agents   AGENTS_TASK (GEMM 1024³) tuned for AGENTS_BUDGET s with one agent, then with all NUM_AGENTS: trials
#            per second, the same seed (random search) for both
#   gemm     GEMM n³ for each n of GEMMS (2048 4096), xgb, GEMM_BUDGET s each
#   conv     each conv of CONVS on its own, every fitting template, CONV_BUDGET s per layer (transfer between layers)
#   clblast  clblast_tuner_xgemm n³ for each n of CLBLAST_GEMMS (2048; CLBLAST=path) for CLBLAST_FACTOR × the time
#            tunefleet took to reach 85% of cuBLAS at n³ (from the gemm phase; CLBLAST_BUDGET s when that is unknown)
#   summary  summary.txt: per task and template, trials, best GFLOPS, seconds to the best, share of the vendor
#   usage: bench/gpu_vs_vendor.sh BIN_DIR OUT_DIR
#   env: PHASES ("vendor agents gemm conv clblast summary"), PLATFORM (default: the first GPU platform),
#        NUM_AGENTS (4), GEMMS, AGENTS_TASK, DB (OUT_DIR/gpu.db), GEMM_BUDGET (90), CONV_BUDGET (45), AGENTS_BUDGET (30),
#        CLBLAST, CLBLAST_GEMMS (2048), CLBLAST_FACTOR (4), CLBLAST_BUDGET (300), CLBLAST_MAX (a cap, none), CONVS (ResNet-18's 3×3 and 1×1 layers, batch 1),
#        CONV_ARGS (more arguments for each conv's tune, e.g. "--template conv2d_1x1.buffer"), GEMM_ARGS (the same
#        for each GEMM's tune, e.g. "--tuner random")
set -uo pipefail
BIN=${1:?usage: bench/gpu_vs_vendor.sh BIN_DIR OUT_DIR}; OUT=${2:?usage: bench/gpu_vs_vendor.sh BIN_DIR OUT_DIR}
source "$(dirname "$0")/require_binaries.sh"
require_binaries "$BIN" tunefleet tunefleet-tracker tunefleet-agent
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
PHASES=${PHASES:-"vendor agents gemm conv clblast summary"}
PLATFORM=${PLATFORM:-}
NUM_AGENTS=${NUM_AGENTS:-4}
DB=${DB:-$OUT/gpu.db}
GEMM_BUDGET=${GEMM_BUDGET:-90}; CONV_BUDGET=${CONV_BUDGET:-45}; AGENTS_BUDGET=${AGENTS_BUDGET:-30}
AGENTS_TASK=${AGENTS_TASK:-gemm:1024,1024,1024}
GEMMS=${GEMMS:-"2048 4096"}
CLBLAST_FACTOR=${CLBLAST_FACTOR:-4}; CLBLAST_BUDGET=${CLBLAST_BUDGET:-300}; CLBLAST_GEMMS=${CLBLAST_GEMMS:-2048}
CONV_ARGS=${CONV_ARGS:-}; GEMM_ARGS=${GEMM_ARGS:-}
# ResNet-18 (224×224, batch 1): every 3×3 layer (stride 1 and the stride-2 first conv of each stage) and every
# 1×1 stride-2 downsample.
CONVS=${CONVS:-"1,64,56,56,64,3,3,1,1 1,64,56,56,128,3,3,2,1 1,128,28,28,128,3,3,1,1 1,128,28,28,256,3,3,2,1
1,256,14,14,256,3,3,1,1 1,256,14,14,512,3,3,2,1 1,512,7,7,512,3,3,1,1 1,64,56,56,128,1,1,2,0
1,128,28,28,256,1,1,2,0 1,256,14,14,512,1,1,2,0"}
# shellcheck source=bench/local_fleet.sh
source "$HERE/local_fleet.sh"
now() { date +%s.%N; }
since() { python3 -c "print(round($(now) - $1, 1))"; }
has() { [[ " $PHASES " == *" $1 "* ]]; }

"$BIN/tunefleet-agent" --list-devices >"$OUT/devices.txt" 2>&1
[ -n "$PLATFORM" ] || PLATFORM=$(first_gpu_platform "$OUT/devices.txt")
if has agents || has gemm || has conv; then
  start_local_fleet "$BIN" "$OUT" gpu "$NUM_AGENTS" "$PLATFORM" 0
  "$BIN/tunefleet" query --rpc-tracker "$FLEET_ADDR" | tee "$OUT/query.txt"
fi

tune() {  # name, budget, devices, db, task args...
  local name=$1 budget=$2 devices=$3 db=$4; shift 4
  local t0; t0=$(now)
  "$BIN/tunefleet" tune --rpc-tracker "$FLEET_ADDR" --rpc-key gpu "$@" --trials 100000 --time-budget "$budget" \
    --devices "$devices" --db "$db" --number 10 --repeat 3 --batch 32 --timeout 30 >"$OUT/tune-$name.log" 2>&1
  echo "$name: $(since "$t0") s" | tee -a "$OUT/wall.txt"
}

if has vendor; then
  # shellcheck disable=SC2086
  python3 "$HERE/torch_reference.py" $CONVS >"$OUT/vendor.txt" 2>&1
  cat "$OUT/vendor.txt"
fi
if has agents; then
  tune agents-1 "$AGENTS_BUDGET" 1 "$OUT/agents-1.db" --task "$AGENTS_TASK" --tuner random --seed 7
  tune "agents-$NUM_AGENTS" "$AGENTS_BUDGET" "$NUM_AGENTS" "$OUT/agents-$NUM_AGENTS.db" --task "$AGENTS_TASK" \
    --tuner random --seed 7
  for db in "$OUT"/agents-*.db; do
    python3 - "$db" <<'PY' | tee -a "$OUT/agents.txt"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n, span, comp = db.execute("SELECT count(*), max(timestamp)-min(timestamp), avg(compile_time) FROM records").fetchone()
best = db.execute("SELECT max(t.flops/r.mean_cost/1e9) FROM records r JOIN tasks t ON t.id=r.task_id "
                  "WHERE r.status=0").fetchone()[0]
print(f"{sys.argv[1].rsplit('/', 1)[-1]}: {n} trials in {span:.1f} s = {n / span:.2f} trials/s, "
      f"mean compile {comp:.3f} s, best {best or 0:.0f} GFLOPS")
PY
  done
fi
if has gemm; then
  # shellcheck disable=SC2086
  for n in $GEMMS; do tune "gemm$n" "$GEMM_BUDGET" "$NUM_AGENTS" "$DB" --task "gemm:$n,$n,$n" $GEMM_ARGS; done
fi
if has conv; then
  # shellcheck disable=SC2086
  for c in $CONVS; do tune "conv-$c" "$CONV_BUDGET" "$NUM_AGENTS" "$DB" --task "conv2d:$c" $CONV_ARGS; done
fi
if has clblast && [ -n "${CLBLAST:-}" ]; then
  CLBLAST=$(cd "$(dirname "$CLBLAST")" && pwd)/$(basename "$CLBLAST")  # it runs from OUT_DIR
  for n in $CLBLAST_GEMMS; do
    # The time tunefleet took to first reach 85% of cuBLAS at n³, from the records of the gemm phase.
    t85=$(python3 - "$DB" "$OUT/vendor.txt" "$n" <<'PY'
import re, sqlite3, sys
try:
    n = sys.argv[3]
    spec = f"gemm:{n},{n},{n}"
    vendor = float(re.search(rf"cublas {spec} \S+ ms (\S+) GFLOPS", open(sys.argv[2]).read()).group(1))
    db = sqlite3.connect(sys.argv[1])
    start = db.execute("SELECT min(r.timestamp - r.wall_time) FROM records r JOIN tasks t ON t.id=r.task_id "
                       "WHERE t.spec LIKE ?", (spec + "%",)).fetchone()[0]
    hit = db.execute("SELECT min(r.timestamp) FROM records r JOIN tasks t ON t.id=r.task_id WHERE r.status=0 AND "
                     "t.spec LIKE ? AND t.flops/r.mean_cost/1e9 >= 0.85*?", (spec + "%", vendor)).fetchone()[0]
    print(round(hit - start, 1) if hit else "")
except Exception:
    print("")
PY
)
    budget=$CLBLAST_BUDGET
    [ -n "$t85" ] && budget=$(python3 -c "print(int($t85 * $CLBLAST_FACTOR + 1))")
    [ -n "${CLBLAST_MAX:-}" ] && [ "$budget" -gt "$CLBLAST_MAX" ] && budget=$CLBLAST_MAX
    echo "tunefleet reached 85% of cuBLAS at ${n}³ after ${t85:-?} s; CLBlast gets $budget s" | tee -a "$OUT/wall.txt"
    t0=$(now)
    (cd "$OUT" && timeout "$budget" stdbuf -oL "$CLBLAST" -platform "$PLATFORM" -device 0 -m "$n" -n "$n" -k "$n" \
       -precision 32 >"clblast$n.log" 2>&1)
    rc=$?
    case $rc in
      0) state="finished" ;;
      124) state="not finished: stopped at the time limit" ;;
      *) state="failed" ;;
    esac
    echo "clblast$n: $(since "$t0") s, exit $rc ($state)" | tee -a "$OUT/wall.txt"
    # Result rows start with "|  <id> |"; the GFLOPS column is the second last.
    sed 's/\x1b\[[0-9;]*m//g' "$OUT/clblast$n.log" | awk -F'|' '$2 ~ /^ *[0-9]+ *$/ {n++; g=$(NF-2)+0; if (g > best) best=g}
      END {printf "clblast configurations measured: %d, best %.1f GFLOPS\n", n, best}' | tee -a "$OUT/wall.txt"
  done
fi
if has summary; then
  python3 - "$DB" "$OUT/vendor.txt" >"$OUT/summary.txt" <<'PY'
import re, sqlite3, sys
vendor = {}
try:
    for name, gf in re.findall(r"^\S+ (\S+) \S+ ms (\S+) GFLOPS", open(sys.argv[2]).read(), re.M):
        vendor[name] = float(gf)
except OSError:
    pass
db = sqlite3.connect(sys.argv[1])
q = """SELECT t.spec, p.name, count(*), sum(r.status=0), max(CASE WHEN r.status=0 THEN t.flops/r.mean_cost/1e9 END),
              min(r.timestamp - r.wall_time), max(r.timestamp)
       FROM records r JOIN tasks t ON t.id=r.task_id JOIN templates p ON p.id=r.template_id
       GROUP BY t.spec, p.name ORDER BY min(r.timestamp)"""
best_of = {}
for spec, tmpl, n, ok, best, t0, t1 in db.execute(q):
    base = spec.split(":float32")[0]
    v = vendor.get(base)
    share = f" = {100 * (best or 0) / v:.0f}% of vendor {v:.0f}" if v else ""
    print(f"{spec} [{tmpl}] trials {n} ok {ok} best {best or 0:.0f} GFLOPS over {t1 - t0:.0f} s{share}")
    best_of[base] = max(best_of.get(base, 0), best or 0)
print("best template per workload:")
for base, best in best_of.items():
    v = vendor.get(base)
    print(f"  {base}: {best:.0f} GFLOPS" + (f" vs {v:.0f} = {100 * best / v:.0f}%" if v else ""))
PY
  cat "$OUT/summary.txt"
fi
cat "$OUT/wall.txt" 2>/dev/null
