#!/usr/bin/env bash
# Replays the fully recorded spaces of bench/data/ with `tunefleet simulate` (no device needed) and prints, for each
# run, the last line of its output: trials-to-95%: <tuner> <median> <baseline> <median> ratio <baseline/tuner>,
# and for runs without history the highest ratio a strategy could show whose first batch of 16 is random.
# The spaces are kept as NAME.db.xz (bench/recorded_space.sh) and unpacked to a temporary folder for the replay; the
# GPU spaces (gpu_*, recorded by bench/record_spaces.sh) are replayed when they are there, skipped if not.
#   usage: bench/simulate.sh [BUILD_DIR] ; env: TUNER (xgb) BASELINE (random) SEEDS (10) TARGET (0.95)
#          EXTRA (more simulate options, e.g. "--xgb-objective reg", "--observe pass --arrival shuffled"),
#          WARM_EXTRA (options for the runs with history only, e.g. "--transfer-trials 16": the history is the
#          sibling's first 16 trials of a replay, as a run's earlier task leaves it, instead of its whole space),
#          DATA (bench/data: where the .db or .db.xz files are),
#          HISTORY (both: the runs with and without history; "without" or "with" for only those)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build}/bin
source bench/require_binaries.sh
require_binaries "$BIN" tunefleet
TUNER=${TUNER:-xgb}; BASELINE=${BASELINE:-random}; SEEDS=${SEEDS:-10}; TARGET=${TARGET:-0.95}
DATA=${DATA:-bench/data}; HISTORY=${HISTORY:-both}
case $HISTORY in both | with | without) ;; *) echo "simulate.sh: HISTORY=$HISTORY is not both, with or without" >&2; exit 2 ;; esac
# shellcheck source=bench/recorded_space.sh
source bench/recorded_space.sh
UNPACKED=$(mktemp -d)
trap 'rm -rf "$UNPACKED"' EXIT

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
  # NVIDIA H200 (bench/record_spaces.sh; bench/data/README.md says when and how)
  "gpu_conv2d_nchwc_image2d|conv2d_nchwc.image2d|conv2d:1,64,14,14,32,3,3,2,1|-"
  "gpu_conv2d_nchwc_image2d|conv2d_nchwc.image2d|conv2d:1,64,14,14,32,3,3,2,1|conv2d:1,32,14,14,32,3,3,2,1"
  "gpu_conv2d_nchwc_image2d|conv2d_nchwc.image2d|conv2d:1,32,14,14,32,3,3,2,1|-"
  "gpu_conv2d_nchwc_image2d|conv2d_nchwc.image2d|conv2d:1,32,14,14,32,3,3,2,1|conv2d:1,64,14,14,32,3,3,2,1"
  "gpu_dwconv2d_nchwc_image2d|depthwise_conv2d_nchwc.image2d|dwconv2d:1,128,14,14,3,3,2,1|-"
  "gpu_dwconv2d_nchwc_image2d|depthwise_conv2d_nchwc.image2d|dwconv2d:1,128,14,14,3,3,2,1|dwconv2d:1,96,14,14,3,3,2,1"
  "gpu_dwconv2d_nchwc_image2d|depthwise_conv2d_nchwc.image2d|dwconv2d:1,96,14,14,3,3,2,1|-"
  "gpu_dwconv2d_nchwc_image2d|depthwise_conv2d_nchwc.image2d|dwconv2d:1,96,14,14,3,3,2,1|dwconv2d:1,128,14,14,3,3,2,1"
  "gpu_conv2d_winograd|conv2d_winograd|conv2d:1,32,7,7,16,3,3,1,1|-"
  "gpu_conv2d_winograd|conv2d_winograd|conv2d:1,32,7,7,16,3,3,1,1|conv2d:1,64,7,7,16,3,3,1,1"
  "gpu_conv2d_winograd|conv2d_winograd|conv2d:1,64,7,7,16,3,3,1,1|-"
  "gpu_conv2d_winograd|conv2d_winograd|conv2d:1,64,7,7,16,3,3,1,1|conv2d:1,32,7,7,16,3,3,1,1"
  "gpu_pointwise_nchwc_image2d|conv2d_nchwc.image2d|conv2d:1,576,7,7,160,1,1,1,0|-"
  "gpu_pointwise_nchwc_image2d|conv2d_nchwc.image2d|conv2d:1,576,7,7,160,1,1,1,0|conv2d:1,960,7,7,160,1,1,1,0"
  "gpu_pointwise_nchwc_image2d|conv2d_nchwc.image2d|conv2d:1,960,7,7,160,1,1,1,0|-"
  "gpu_pointwise_nchwc_image2d|conv2d_nchwc.image2d|conv2d:1,960,7,7,160,1,1,1,0|conv2d:1,576,7,7,160,1,1,1,0"
  "gpu_dwmobile_nchwc_image2d|depthwise_conv2d_nchwc.image2d|dwconv2d:1,576,14,14,3,3,2,1|-"
  "gpu_dwmobile_nchwc_image2d|depthwise_conv2d_nchwc.image2d|dwconv2d:1,576,14,14,3,3,2,1|dwconv2d:1,960,7,7,3,3,1,1"
  "gpu_dwmobile_nchwc_image2d|depthwise_conv2d_nchwc.image2d|dwconv2d:1,960,7,7,3,3,1,1|-"
  "gpu_dwmobile_nchwc_image2d|depthwise_conv2d_nchwc.image2d|dwconv2d:1,960,7,7,3,3,1,1|dwconv2d:1,576,14,14,3,3,2,1"
)
skipped=()

for run in "${RUNS[@]}"; do
  IFS='|' read -r db tmpl task from <<<"$run"
  if [[ $HISTORY == with && $from == - ]] || [[ $HISTORY == without && $from != - ]]; then continue; fi
  if [[ ! -f $UNPACKED/$db.db ]] && ! recorded_space "$DATA/$db.db" "$UNPACKED/$db.db" 2>/dev/null; then
    [[ " ${skipped[*]} " == *" $db "* ]] || skipped+=("$db")
    continue
  fi
  # shellcheck disable=SC2206
  args=(simulate --db "$UNPACKED/$db.db" --template "$tmpl" --task "$task" --tuner "$TUNER" --baseline "$BASELINE"
        --seeds "$SEEDS" --target "$TARGET" ${EXTRA:-})
  label="$db $task"
  if [[ $from != - ]]; then
    # shellcheck disable=SC2206
    args+=(--transfer-from "$from" ${WARM_EXTRA:-})
    label+=" (transfer from $from)"
  fi
  start=$(date +%s.%N)
  out=$("$BIN/tunefleet" "${args[@]}" 2>&1) || true  # a failed replay prints its error as the last line
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  bound=""
  if [[ $from == - ]]; then
    # The most a strategy can show without history when its first batch of 16 is random (xgb with
    # --xgb-prior-pool 0): its first model comes after 16 random results, so at best it reaches the target at
    # trial 17 in every seed where random did not within 16. The device prior's first plan is not so bound.
    bound=$(python3 -c '
import statistics, sys
for line in sys.stdin:
    f = line.split()
    if f[:4] == [sys.argv[1] + ":", "trials", "per", "seed"] and len(f) > 4:
        r = [int(x) for x in f[4:]]
        print("   (bound of a random first batch of 16: ratio <= %.2f)"
              % (statistics.median(r) / statistics.median(min(x, 17) for x in r)))' "$BASELINE" <<<"$out")
  fi
  printf '%-75s %s   [%.1f s]%s\n' "$label" "$(tail -n 1 <<<"$out")" "$secs" "$bound"
done
for db in "${skipped[@]}"; do echo "skipped: $DATA/$db.db(.xz) is not recorded yet (bench/record_spaces.sh)"; done
