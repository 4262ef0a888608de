#!/usr/bin/env bash
# Model-based search against random search on a real device, on whole (large) spaces: each task of TASKS is tuned
# from scratch with each tuner of TUNERS and each seed of SEEDS for TRIALS trials (own log per run, no history), then
# bench/search_curves.py prints, per task, each tuner's median best GFLOPS after each number of CHECKPOINTS trials
# and the trials it took to reach 90% and 95% of the best any run found. The replay simulator (bench/simulate.sh)
# answers the same question on small spaces recorded whole; this one measures it where spaces are 10^4-10^6.
#   usage: bench/search_vs_random.sh BIN_DIR OUT_DIR
#   env: TASKS ("template|task" words; default below), TUNERS ("xgb random"), SEEDS ("1 2 3"), TRIALS (256),
#        CHECKPOINTS ("16 32 64 128 256"), NUM_AGENTS (4: agents started on the device, and devices each run
#        leases), PLATFORM (the first GPU platform, else 0), DEVICE (0), TIMING ("--number 10 --repeat 3"),
#        TUNE_ARGS (more tune options), TRACKER + KEY (use a running tracker instead of starting one)
# Writes OUT_DIR/<template>-<task>-<tuner>-<seed>.{db,csv,log}, OUT_DIR/curves.txt (the table) and the fleet's logs.
set -euo pipefail
BIN=${1:?usage: bench/search_vs_random.sh BIN_DIR OUT_DIR}; OUT=${2:?usage: bench/search_vs_random.sh BIN_DIR OUT_DIR}
source "$(dirname "$0")/require_binaries.sh"
require_binaries "$BIN" tunefleet tunefleet-tracker tunefleet-agent
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
TASKS=${TASKS:-"conv2d_nchwc.image2d|conv2d:1,128,28,28,128,3,3,1,1
depthwise_conv2d_nchwc.image2d|dwconv2d:1,144,56,56,3,3,1,1 gemm.buffer|gemm:1024,1024,1024"}
TUNERS=${TUNERS:-"xgb random"}; SEEDS=${SEEDS:-"1 2 3"}; TRIALS=${TRIALS:-256}
CHECKPOINTS=${CHECKPOINTS:-"16 32 64 128 256"}; NUM_AGENTS=${NUM_AGENTS:-4}; DEVICE=${DEVICE:-0}
TIMING=${TIMING:-"--number 10 --repeat 3"}; TUNE_ARGS=${TUNE_ARGS:-}

if [[ -n ${TRACKER:-} ]]; then
  ADDR=$TRACKER; KEY=${KEY:?KEY names the device key of TRACKER}
else
  KEY=bench
  # shellcheck source=bench/local_fleet.sh
  source "$HERE/local_fleet.sh"
  "$BIN/tunefleet-agent" --list-devices >"$OUT/devices.txt" 2>&1
  [[ -n ${PLATFORM:-} ]] || PLATFORM=$(first_gpu_platform "$OUT/devices.txt")
  start_local_fleet "$BIN" "$OUT" "$KEY" "$NUM_AGENTS" "$PLATFORM" "$DEVICE"
  ADDR=$FLEET_ADDR
fi

csvs=()
for entry in $TASKS; do
  IFS='|' read -r tmpl task <<<"$entry"
  for tuner in $TUNERS; do
    for seed in $SEEDS; do
      name="$tmpl-${task//[:,]/_}-$tuner-$seed"
      if [[ ! -s $OUT/$name.csv ]]; then
        start=$(date +%s)
        transfer=""  # each run in its own log: the model takes no history (the other tuners never do)
        [[ $tuner == xgb ]] && transfer=--no-transfer
        # shellcheck disable=SC2086
        "$BIN/tunefleet" tune --rpc-tracker "$ADDR" --rpc-key "$KEY" --task "$task" --template "$tmpl" \
          --tuner "$tuner" --seed "$seed" --trials "$TRIALS" $transfer --devices "$NUM_AGENTS" $TIMING \
          --batch 32 --timeout 30 --db "$OUT/$name.db" $TUNE_ARGS >"$OUT/$name.log" 2>&1 ||
          { echo "$name: tune failed, see $OUT/$name.log" >&2; tail -n 3 "$OUT/$name.log" >&2; exit 1; }
        "$BIN/tunefleet" export --db "$OUT/$name.db" --format csv -o "$OUT/$name.csv"
        echo "$name: $TRIALS trials in $(($(date +%s) - start)) s"
      fi
      csvs+=("$OUT/$name.csv")
    done
  done
done
# shellcheck disable=SC2086
# The steered trials start after 32, or after half the run when it is shorter (0.0 for all, before).
python3 "$HERE/search_curves.py" --checkpoints $CHECKPOINTS --first $((TRIALS < 64 ? TRIALS / 2 : 32)) -- "${csvs[@]}" | tee "$OUT/curves.txt"
