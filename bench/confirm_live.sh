#!/usr/bin/env bash
# `tune --confirm` on a live device: for each task of TASKS and each seed of SEEDS, a random search of TRIALS trials
# with --confirm CONFIRM into its own log. From each log it prints the pick without confirming (the config with the
# fastest first result) and the pick with it (the lowest lower median, what the run and `best` name), each at the
# median of its results; the pick without confirming is among the round's configs, so its median is measured too.
#   slowdown: the unconfirmed pick's median over the confirmed pick's (1.00 = confirming changed nothing);
#   optimism: the unconfirmed pick's median over its first result (how much its one lucky run flattered it);
#   cost: the round's jobs and seconds against the trials' seconds.
# Run it by hand on the machine with the device.
#   usage: bench/confirm_live.sh BIN_DIR OUT_DIR   (BIN_DIR: build/bin or a bundle made by bench/device_bundle.sh)
#   env: TASKS ("gemm:256,256,256 conv2d:1,32,28,28,32,3,3,1,1"), SEEDS ("1 2 3"), TRIALS (48), CONFIRM (4),
#        NUM_AGENTS (2), PLATFORM (the first GPU platform, else 0), DEVICE (0),
#        TIMING ("--number 3 --repeat 3 --min-repeat-ms 2"), TUNE_ARGS (more tune options for every run)
set -uo pipefail
if [ $# -ne 2 ]; then sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
BIN=$1; OUT=$2; mkdir -p "$OUT"
TASKS=${TASKS:-"gemm:256,256,256 conv2d:1,32,28,28,32,3,3,1,1"}; SEEDS=${SEEDS:-"1 2 3"}; TRIALS=${TRIALS:-48}
CONFIRM=${CONFIRM:-4}; NUM_AGENTS=${NUM_AGENTS:-2}; DEVICE=${DEVICE:-0}
TIMING=${TIMING:-"--number 3 --repeat 3 --min-repeat-ms 2"}

# shellcheck source=bench/local_fleet.sh
source "$(dirname "$0")/local_fleet.sh"
"$BIN/tunefleet-agent" --list-devices >"$OUT/devices.txt" 2>&1
[ -n "${PLATFORM:-}" ] || PLATFORM=$(first_gpu_platform "$OUT/devices.txt")
start_local_fleet "$BIN" "$OUT" confirm "$NUM_AGENTS" "$PLATFORM" "$DEVICE"

n=0
for task in $TASKS; do
  for seed in $SEEDS; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    "$BIN/tunefleet" tune --rpc-tracker "$FLEET_ADDR" --rpc-key confirm --task "$task" --tuner random \
      --seed "$seed" --trials "$TRIALS" --confirm "$CONFIRM" --devices "$NUM_AGENTS" --db "$OUT/run$n.db" \
      $TIMING ${TUNE_ARGS:-} >"$OUT/run$n.out" 2>&1
    echo "run $n: $task seed $seed rc $?" >>"$OUT/runs.txt"
  done
done

python3 - "$OUT" "$n" "$CONFIRM" <<'PY'
import sqlite3, statistics, sys
out, runs, confirm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
labels = open(f"{out}/runs.txt").read().splitlines()
print(f"{'run':<52} {'slowdown':>8} {'optimism':>8} {'round':>6} {'round s':>8} {'trials s':>8}")
slow = []
for k in range(1, runs + 1):
    label = labels[k - 1] if k <= len(labels) else f"run {k}"
    try:
        c = sqlite3.connect(f"file:{out}/run{k}.db?mode=ro", uri=True)
        rows = c.execute("SELECT id, config, mean_cost, timestamp FROM records WHERE status = 0 ORDER BY id").fetchall()
        every = c.execute("SELECT id, config, timestamp FROM records ORDER BY id").fetchall()
    except sqlite3.Error as e:
        print(f"{label:<52} no log: {e}")
        continue
    results = {}
    for rid, config, cost, _ in rows:
        results.setdefault(config, []).append((cost, rid))
    if len(results) < 2:
        print(f"{label:<52} fewer than two configs ran")
        continue
    median = {cfg: sorted(v)[(len(v) - 1) // 2] for cfg, v in results.items()}
    first = {cfg: v[0] for cfg, v in results.items()}
    confirmed = min(median, key=lambda cfg: median[cfg])
    lucky = min(first, key=lambda cfg: (first[cfg][0], first[cfg][1]))
    seen, trial_end, round_start = set(), None, None
    for rid, config, ts in every:  # the round starts at the first record of a config already measured
        if config in seen and round_start is None:
            round_start = (rid, ts)
        seen.add(config)
    t0, tn = every[0][2], every[-1][2]
    round_jobs = sum(1 for rid, _, _ in every if round_start and rid >= round_start[0])
    round_s = tn - round_start[1] if round_start else 0
    s = median[lucky][0] / median[confirmed][0]
    slow.append(s)
    print(f"{label:<52} {s:>8.3f} {median[lucky][0] / first[lucky][0]:>8.3f} {round_jobs:>6} {round_s:>8.1f} "
          f"{(round_start[1] if round_start else tn) - t0:>8.1f}")
if slow:
    print(f"runs {len(slow)}: slowdown avoided mean {statistics.mean(slow):.3f} max {max(slow):.3f}; "
          f"picks changed {sum(1 for s in slow if s > 1.0)}; >5% slower {sum(1 for s in slow if s > 1.05)}")
PY
