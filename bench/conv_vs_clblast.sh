#!/usr/bin/env bash
# Benchmark (run by hand, not in CI): small ResNet-like conv2d layers, float32, tuned by tunefleet with each
# template that fits (a time budget per layer and template) beside CLBlast's convgemm tuner
# (clblast_tuner_xconvgemm, Debian package clblast-utils: the im2col-free "convgemm" kernel) on the same OpenCL
# device, bounded by the same time. Prints best GFLOPS, configurations tried and time for each, then a
# Markdown table.
#
# GFLOPS mean the same thing on both sides: 2·N·K·OH·OW·C·KH·KW per run (tunefleet's task FLOPs; CLBlast's
# tuner counts batch·2·OH·OW·K·C·KH·KW), divided by the best time (tunefleet: mean of --number runs timed with
# OpenCL profiling events; CLBlast: fastest of -runs 2 host-timed launches after one warm-up).
#
# CLBlast's tuner takes no padding, stride or dilation (it always runs pad 0, stride 1), so it gets the layer's
# stand-in with the same output and the same FLOPs:
#   stride 1:            the input padded beforehand (H+2·pad × W+2·pad), pad 0            -> the same layer
#   1×1, stride s, pad 0: the input subsampled beforehand (OH × OW)                          -> the same layer
#   other strides:        an (OH+KH-1) × (OW+KW-1) input, stride 1, pad 0: the same GEMM view
#                         (M = OH·OW, N = K, K = C·KH·KW), reading a smaller input than the strided layer
#
#   usage: bench/conv_vs_clblast.sh [BUILD_DIR]
#   env:   LAYERS (N,C,H,W,K,KH,KW,stride,pad ...), BUDGET (s per layer and template, default 75),
#          CLBLAST_BUDGET (s per layer, default BUDGET), TUNER (default xgb), TEMPLATES, PLATFORM, DEVICE
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build}/bin
LAYERS=${LAYERS:-"1,16,28,28,16,3,3,1,1 1,16,28,28,32,3,3,2,1 1,16,28,28,32,1,1,2,0"}
BUDGET=${BUDGET:-75}; CLBLAST_BUDGET=${CLBLAST_BUDGET:-$BUDGET}; TUNER=${TUNER:-xgb}
TEMPLATES=${TEMPLATES:-"conv2d_nchw.buffer conv2d_nchwc.image2d conv2d_winograd"}
PLATFORM=${PLATFORM:-0}; DEVICE=${DEVICE:-0}
WORK=$(mktemp -d)
# shellcheck source=bench/local_fleet.sh
source bench/local_fleet.sh
start_local_fleet "$BIN" "$WORK" bench 1 "$PLATFORM" "$DEVICE"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$WORK/load.txt"
ROWS=$WORK/rows.tsv; : >"$ROWS"   # layer, tuner, best GFLOPS, best ms, configurations (ok/tried), seconds

secs_since() { echo "$(date +%s.%N) - $1" | bc -l | xargs printf %.1f; }

for layer in $LAYERS; do
  IFS=, read -r n c h w k kh kw stride pad <<<"$layer"
  oh=$(( (h + 2 * pad - kh) / stride + 1 )); ow=$(( (w + 2 * pad - kw) / stride + 1 ))
  flops=$(( 2 * n * k * oh * ow * c * kh * kw ))
  spec="conv2d:$layer"
  echo "== $spec: output ${oh}x${ow}, $flops FLOP per run"
  for tmpl in $TEMPLATES; do
    db="$WORK/${layer//,/_}-$tmpl.db"
    log="$WORK/tune-${layer//,/_}-$tmpl.log"
    start=$(date +%s.%N)
    # Each (layer, template) has its own log: no transfer from earlier layers, as CLBlast has none.
    rc=0
    "$BIN/tunefleet" tune --rpc-tracker "$FLEET_ADDR" --rpc-key bench --task "$spec" --template "$tmpl" \
      --trials 100000 --time-budget "$BUDGET" --tuner "$TUNER" --db "$db" --number 3 --repeat 3 --batch 16 \
      --timeout 30 >"$log" 2>&1 || rc=$?
    # A run none of whose trials succeeded exits 1 with its records kept: counted as "0 ok of N".
    if [ "$rc" = 0 ] || grep -q "no trial succeeded" "$log"; then
      secs=$(secs_since "$start")
      read -r best ms ok tried < <(sqlite3 -separator ' ' "$db" \
        "SELECT printf('%.2f', max(t.flops / r.mean_cost / 1e9)), printf('%.4f', min(r.mean_cost) * 1e3),
                (SELECT count(*) FROM records WHERE status = 0), (SELECT count(*) FROM records)
         FROM records r JOIN tasks t ON t.id = r.task_id WHERE r.status = 0")
      task_flops=$(sqlite3 "$db" "SELECT printf('%.0f', flops) FROM tasks")
      [ "$task_flops" = "$flops" ] || echo "   note: tunefleet counts $task_flops FLOP for $spec, this script $flops"
      echo "   tunefleet $tmpl ($TUNER): best ${best:-none} GFLOPS (${ms:-?} ms), $ok ok of $tried configurations in $secs s"
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$spec" "tunefleet $tmpl" "${best:--}" "${ms:--}" "$ok / $tried" "$secs" >>"$ROWS"
    elif grep -q "cannot run" "$log"; then
      why=$(grep -o "cannot run.*" "$log" | head -1)
      echo "   tunefleet $tmpl: does not fit ($why)"
    else
      echo "   tunefleet $tmpl: failed, see $log"; tail -3 "$log"
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$spec" "tunefleet $tmpl" "failed" "-" "-" "$(secs_since "$start")" >>"$ROWS"
    fi
  done

  if ! command -v clblast_tuner_xconvgemm >/dev/null; then
    echo "   CLBlast: clblast_tuner_xconvgemm not installed (apt-get install clblast-utils)"; continue
  fi
  if [ "$stride" = 1 ]; then
    ch=$(( h + 2 * pad )); cw=$(( w + 2 * pad )); how="input pre-padded to ${ch}x${cw}"
  elif [ "$kh" = 1 ] && [ "$kw" = 1 ] && [ "$pad" = 0 ]; then
    ch=$oh; cw=$ow; how="input pre-subsampled to ${ch}x${cw}"
  else
    ch=$(( oh + kh - 1 )); cw=$(( ow + kw - 1 )); how="stand-in: ${ch}x${cw} input, stride 1, same GEMM view"
  fi
  cb_flops=$(( 2 * n * (ch - kh + 1) * (cw - kw + 1) * k * c * kh * kw ))
  [ "$cb_flops" = "$flops" ] || { echo "   CLBlast stand-in counts $cb_flops FLOP, not $flops: skipped"; continue; }
  cblog="$WORK/clblast-${layer//,/_}.log"
  start=$(date +%s.%N)
  # CLBlast's tuner tries its configurations one after the other until done; `timeout` bounds it like the budget.
  (cd "$WORK" && timeout "$CLBLAST_BUDGET" stdbuf -oL clblast_tuner_xconvgemm -platform "$PLATFORM" \
     -device "$DEVICE" -precision 32 -batch_num "$n" -channels "$c" -height "$ch" -width "$cw" -kernelh "$kh" \
     -kernelw "$kw" -num_kernels "$k" >"$cblog" 2>&1) || true
  secs=$(secs_since "$start")
  table=$(sed 's/\x1b\[[0-9;]*m//g' "$cblog" | grep -E '^\| +[0-9]+ +\|' || true)
  tried=$(printf '%s\n' "$table" | grep -c . || true)
  okrows=$(printf '%s\n' "$table" | grep 'results match' || true)
  ok=$(printf '%s\n' "$okrows" | grep -c . || true)
  # Columns: | ID | total | params | local | global | compiles | time | GFLOPS | status |
  # CLBlast prints GFLOPS with one decimal and the time in ms with two: both are taken as printed.
  best=$(printf '%s\n' "$okrows" | awk -F'|' 'NF > 3 {g=$(NF-2); gsub(/ /, "", g); print g}' | sort -g | tail -1)
  best_ms=$(printf '%s\n' "$okrows" | awk -F'|' 'NF > 3 {t=$(NF-3); gsub(/[ ms]/, "", t); print t}' | sort -g | head -1)
  total=$(sed 's/\x1b\[[0-9;]*m//g' "$cblog" | grep -oE 'Found [0-9]+ configuration' | grep -oE '[0-9]+' || echo '?')
  echo "   CLBlast xconvgemm ($how): best ${best:-none} GFLOPS (${best_ms:-?} ms), $ok ok of $tried configurations (of $total) in $secs s"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$spec" "CLBlast xconvgemm ($how)" "${best:--}" "${best_ms:--}" \
    "$ok / $tried of $total" "$secs" >>"$ROWS"
done

echo
echo "| layer | tuner | best GFLOPS | best ms | configurations ok / tried | time (s) |"
echo "|---|---|---|---|---|---|"
awk -F'\t' '{printf "| `%s` | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6}' "$ROWS"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "logs in $WORK"
