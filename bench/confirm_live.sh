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
rm -f "$OUT"/run*.db "$OUT"/run*.db-* "$OUT"/run*.out "$OUT/runs.txt"  # a log left from before would be resumed
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

python3 - "$OUT" "$n" <<'PY'
import sqlite3, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
labels = open(f"{out}/runs.txt").read().splitlines()
print(f"{'run':<52} {'slowdown':>8} {'optimism':>8} {'round':>6} {'round s':>8} {'trials s':>8}")
slow, changed = [], 0
for k in range(1, runs + 1):
    label = labels[k - 1] if k <= len(labels) else f"run {k}"
    try:
        c = sqlite3.connect(f"file:{out}/run{k}.db?mode=ro", uri=True)
        every = c.execute("SELECT id, template_id, device_id, config, status, mean_cost, timestamp FROM records "
                          "ORDER BY id").fetchall()
    except sqlite3.Error as e:
        print(f"{label:<52} no log: {e}")
        continue
    # A config is (template, device, config JSON), as `best` groups them; its results in record order.
    results = {}
    for rid, tmpl, dev, config, status, cost, _ in every:
        if status == 0 and cost > 0:
            results.setdefault((tmpl, dev, config), []).append((cost, rid))
    if len(results) < 2:
        print(f"{label:<52} fewer than two configs ran")
        continue
    median = {key: sorted(v)[(len(v) - 1) // 2] for key, v in results.items()}
    first = {key: v[0] for key, v in results.items()}
    confirmed = min(median, key=lambda key: median[key])
    lucky = min(first, key=lambda key: first[key])
    changed += lucky != confirmed
    # The round starts after the last trial: its time from the last trial's record to the last record.
    seen, last_trial = set(), None
    for i, (rid, tmpl, dev, config, *_rest) in enumerate(every):
        if (tmpl, dev, config) in seen:
            break
        seen.add((tmpl, dev, config))
        last_trial = i
    t0, t_trials, t_end = every[0][6], every[last_trial][6], every[-1][6]
    round_jobs = len(every) - 1 - last_trial
    s = median[lucky][0] / median[confirmed][0]
    slow.append(s)
    print(f"{label:<52} {s:>8.3f} {median[lucky][0] / first[lucky][0]:>8.3f} {round_jobs:>6} "
          f"{t_end - t_trials:>8.1f} {t_trials - t0:>8.1f}")
if slow:
    print(f"runs {len(slow)}: slowdown avoided mean {statistics.mean(slow):.3f} max {max(slow):.3f}; "
          f"picks changed {changed}; >5% slower {sum(1 for s in slow if s > 1.05)}")
PY
