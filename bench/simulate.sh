#!/usr/bin/env bash
# Replays the fully recorded spaces of bench/data/ with `tunefleet simulate` (no device needed) and prints, for each
# run, the last line of its output: trials-to-95%: <tuner> <median> <baseline> <median> ratio <baseline/tuner>.
#   usage: bench/simulate.sh [BUILD_DIR] ; env: TUNER (xgb) BASELINE (random) SEEDS (10) TARGET (0.95)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build}/bin
TUNER=${TUNER:-xgb}; BASELINE=${BASELINE:-random}; SEEDS=${SEEDS:-10}; TARGET=${TARGET:-0.95}

# db | template | task | sibling task for --transfer-from (or -)
RUNS=(
  "dwconv2d_nchwc_image2d|depthwise_conv2d_nchwc.image2d|dwconv2d:1,8,8,8,3,3,1,1|-"
  "dwconv2d_nchwc_image2d|depthwise_conv2d_nchwc.image2d|dwconv2d:1,8,8,8,3,3,1,1|dwconv2d:1,4,8,8,3,3,1,1"
  "dwconv2d_nchwc_image2d|depthwise_conv2d_nchwc.image2d|dwconv2d:1,4,8,8,3,3,1,1|-"
  "dwconv2d_nchwc_image2d|depthwise_conv2d_nchwc.image2d|dwconv2d:1,4,8,8,3,3,1,1|dwconv2d:1,8,8,8,3,3,1,1"
  "conv2d_nchwc_image2d|conv2d_nchwc.image2d|conv2d:1,8,8,8,8,3,3,1,1|-"
  "conv2d_nchwc_image2d|conv2d_nchwc.image2d|conv2d:1,8,8,8,8,3,3,1,1|conv2d:1,4,8,8,4,3,3,1,1"
  "conv2d_nchwc_image2d|conv2d_nchwc.image2d|conv2d:1,4,8,8,4,3,3,1,1|-"
  "conv2d_nchwc_image2d|conv2d_nchwc.image2d|conv2d:1,4,8,8,4,3,3,1,1|conv2d:1,8,8,8,8,3,3,1,1"
  "conv2d_winograd|conv2d_winograd|conv2d:1,4,8,8,8,3,3,1,1|-"
  "conv2d_winograd|conv2d_winograd|conv2d:1,4,8,8,8,3,3,1,1|conv2d:1,4,8,8,4,3,3,1,1"
  "conv2d_winograd|conv2d_winograd|conv2d:1,4,8,8,4,3,3,1,1|-"
  "conv2d_winograd|conv2d_winograd|conv2d:1,4,8,8,4,3,3,1,1|conv2d:1,4,8,8,8,3,3,1,1"
)

for run in "${RUNS[@]}"; do
  IFS='|' read -r db tmpl task from <<<"$run"
  args=(simulate --db "bench/data/$db.db" --template "$tmpl" --task "$task" --tuner "$TUNER" --baseline "$BASELINE"
        --seeds "$SEEDS" --target "$TARGET")
  label="$db $task"
  if [[ $from != - ]]; then args+=(--transfer-from "$from"); label+=" (transfer from $from)"; fi
  start=$(date +%s.%N)
  out=$("$BIN/tunefleet" "${args[@]}" 2>/dev/null)
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  printf '%-75s %s   [%.1f s]\n' "$label" "$(tail -n 1 <<<"$out")" "$secs"
done
