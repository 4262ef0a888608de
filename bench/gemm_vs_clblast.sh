#!/usr/bin/env bash
# Benchmark (run by hand, not in CI): GEMM M×N×K float32 tuned by tunefleet (random search, TRIALS trials)
# beside CLBlast's tuner (clblast_tuner_xgemm, Debian package clblast-utils) on the same OpenCL device, in one run.
# Prints best GFLOPS and trials (configurations) per minute for both.
#   usage: bench/gemm_vs_clblast.sh [BUILD_DIR] ; env: M N K (256), TRIALS (200), TUNER (random), PLATFORM, DEVICE,
#   NUMBER (3: kernel runs per timing), CLBLAST_TIMEOUT (300: seconds for CLBlast's tuner)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build}/bin
M=${M:-256}; N=${N:-256}; K=${K:-256}
TRIALS=${TRIALS:-200}; TUNER=${TUNER:-random}
PLATFORM=${PLATFORM:-0}; DEVICE=${DEVICE:-0}
WORK=$(mktemp -d)
# shellcheck source=bench/local_fleet.sh
source bench/local_fleet.sh
start_local_fleet "$BIN" "$WORK" bench 1 "$PLATFORM" "$DEVICE"
start=$(date +%s.%N)
"$BIN/tunefleet" tune --rpc-tracker "$FLEET_ADDR" --rpc-key bench --task "gemm:$M,$N,$K" --trials "$TRIALS" \
  --tuner "$TUNER" --db "$WORK/bench.db" --number ${NUMBER:-3} --repeat 3 --batch 16 --timeout 60 >"$WORK/tune.log" 2>&1
end=$(date +%s.%N)
tf_secs=$(echo "$end - $start" | bc -l)
tf_best=$(sqlite3 "$WORK/bench.db" "SELECT printf('%.2f', max(t.flops / r.mean_cost / 1e9)) FROM records r JOIN tasks t ON t.id = r.task_id WHERE r.status = 0")
tf_ok=$(sqlite3 "$WORK/bench.db" "SELECT count(*) FROM records WHERE status = 0")
echo "tunefleet  gemm $M x $N x $K: best $tf_best GFLOPS after $TRIALS $TUNER trials ($tf_ok ok) in $(printf %.1f "$tf_secs") s = $(echo "$TRIALS * 60 / $tf_secs" | bc -l | xargs printf %.1f) trials/min"

if command -v clblast_tuner_xgemm >/dev/null; then
  # CLBlast's tuner runs until it has tried every configuration of its phases; CLBLAST_TIMEOUT (seconds, default
  # 300) bounds it, and the figures are then those of the configurations it measured.
  start=$(date +%s.%N)
  (cd "$WORK" && timeout "${CLBLAST_TIMEOUT:-300}" stdbuf -oL clblast_tuner_xgemm -platform "$PLATFORM" \
     -device "$DEVICE" -m "$M" -n "$N" -k "$K" -precision 32 >"$WORK/clblast.log" 2>&1) || true
  end=$(date +%s.%N)
  cb_secs=$(echo "$end - $start" | bc -l)
  rows=$(sed 's/\x1b\[[0-9;]*m//g' "$WORK/clblast.log" | grep -E '^\| +[0-9]+ +\|' || true)
  cb_configs=$(printf '%s\n' "$rows" | grep -c . || true)
  cb_best=$(printf '%s\n' "$rows" | awk -F'|' '{print $(NF-2)}' | sort -g | tail -1 | tr -d ' ')
  echo "CLBlast    gemm $M x $N x $K: best ${cb_best:-?} GFLOPS over $cb_configs configurations in $(printf %.1f "$cb_secs") s = $(echo "$cb_configs * 60 / $cb_secs" | bc -l | xargs printf %.1f) configurations/min"
else
  echo "CLBlast    clblast_tuner_xgemm not installed (apt-get install clblast-utils)"
fi
echo "logs in $WORK"
