#!/usr/bin/env bash
# Compares two cost model objectives live, seed by seed: for each seed of SEEDS, one of bench/transfer_live.sh's runs
# (KIND cold: without history, its run with history cut to a single trial; KIND warm: with the recorded space's other
# task as history, its run without history cut to a single trial) once with the default `--xgb-objective auto` and
# once with B_ARGS, both at the same time, as two fleets of NUM_AGENTS agents on the one device (its device lock
# gives every timing the device alone, so the two runs see the same machine at the same time). Prints per seed the
# trial at which each run first chose a config recorded within 95% of the best, then the medians ("never" counts as
# one trial past TRIALS). Run it by hand on the machine with the device.
#   usage: bench/objectives_live.sh BIN_DIR OUT_DIR   (BIN_DIR: build/bin or a bundle made by bench/device_bundle.sh)
#   env: SEEDS (1 2 3 4), KIND (cold), TRIALS (400), B_ARGS ("--xgb-objective rank"), and those of
#        bench/transfer_live.sh (TASK, DB, TEMPLATE, ...)
set -uo pipefail
if [ $# -ne 2 ]; then sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
BIN=$1; OUT=$2
source "$(dirname "$0")/require_binaries.sh"
require_binaries "$BIN" tunefleet tunefleet-tracker tunefleet-agent
mkdir -p "$OUT"
SEEDS=${SEEDS:-1 2 3 4}; B_ARGS=${B_ARGS:---xgb-objective rank}
KIND=${KIND:-cold}; TRIALS=${TRIALS:-400}
case $KIND in
  cold) export COLD_TRIALS=$TRIALS WARM_TRIALS=1; lines=2 ;;
  warm) export WARM_TRIALS=$TRIALS COLD_TRIALS=1; lines=3 ;;  # its first line names the history used
  *) echo "objectives_live: KIND must be cold or warm, not '$KIND'" >&2; exit 2 ;;
esac
here=$(dirname "$0")
for seed in $SEEDS; do
  SEEDS=$seed TUNE_ARGS="" bash "$here/transfer_live.sh" "$BIN" "$OUT/a-$seed" >"$OUT/a-$seed.txt" 2>&1 &
  SEEDS=$seed TUNE_ARGS="$B_ARGS" bash "$here/transfer_live.sh" "$BIN" "$OUT/b-$seed" >"$OUT/b-$seed.txt" 2>&1 &
  wait
  for side in a b; do
    printf 'seed %s %s: %s\n' "$seed" "$side" "$(grep -A"$lines" "^$KIND-" "$OUT/$side-$seed.txt" | tr '\n' ' ')"
  done
done | tee "$OUT/objectives_live.txt"

# runs.tsv of each run: "kind seed trials live recorded"; 0 = never.
python3 - "$OUT" "$TRIALS" "$B_ARGS" "$KIND" <<'PY' | tee -a "$OUT/objectives_live.txt"
import glob, os, statistics, sys
out, budget = sys.argv[1], int(sys.argv[2])
res = {"a": {}, "b": {}}
for side in res:
    for f in glob.glob(os.path.join(out, side + "-*", "runs.tsv")):
        for line in open(f):
            kind, seed, _, live, rec = line.split()
            if kind == sys.argv[4]:
                res[side][seed] = (int(rec) or budget + 1, int(live) or budget + 1)
seeds = sorted(set(res["a"]) & set(res["b"]), key=int)
if not seeds:
    sys.exit("objectives_live: no seed finished on both sides")
for col, what in ((0, "as recorded"), (1, "timed live")):
    a = [res["a"][s][col] for s in seeds]
    b = [res["b"][s][col] for s in seeds]
    print(f"{what}, {len(seeds)} seeds: auto median {statistics.median(a):g}, reached {sum(x <= budget for x in a)}; "
          f"{sys.argv[3]} median {statistics.median(b):g}, reached {sum(x <= budget for x in b)}; "
          f"auto earlier in {sum(x < y for x, y in zip(a, b))}, later in {sum(x > y for x, y in zip(a, b))}")
PY
