#!/usr/bin/env bash
# Checks the replay's figures on a live device: tunes TASK with `tune --tuner xgb`, once with a recorded space's
# other task in its log (warm start) and once with an empty log, and with BASELINE set also with that strategy
# (random) on an empty log, for each seed of SEEDS. For each run it prints the trial at which a result first came
# within 95% of the best recorded for TASK in DB, timed live and as recorded (what the configs the run chose were
# recorded at, as the replay counts); with several seeds, the medians and their ratios as simulate prints them.
# Run it by hand on the machine with the device.
#   usage: bench/transfer_live.sh BIN_DIR OUT_DIR   (BIN_DIR: build/bin or a bundle made by bench/device_bundle.sh)
#   env: DB (bench/data/gpu_pointwise_nchwc_image2d.db, or its .xz), TEMPLATE (conv2d_nchwc.image2d),
#        TASK (conv2d:1,960,7,7,160,1,1,1,0), WARM_TRIALS (64), COLD_TRIALS (640, also the baseline's), SEEDS (1),
#        BASELINE (none), NUM_AGENTS (8), PLATFORM (the first GPU platform, else 0), DEVICE (0),
#        TIMING ("--number 10 --repeat 3 --min-repeat-ms 2"), TUNE_ARGS (more tune options for every run, e.g.
#        "--xgb-objective rank" to compare objectives side by side)
set -uo pipefail
if [ $# -ne 2 ]; then sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
BIN=$1; OUT=$2; mkdir -p "$OUT"
DB=${DB:-bench/data/gpu_pointwise_nchwc_image2d.db}; TEMPLATE=${TEMPLATE:-conv2d_nchwc.image2d}
TASK=${TASK:-conv2d:1,960,7,7,160,1,1,1,0}; WARM_TRIALS=${WARM_TRIALS:-64}; COLD_TRIALS=${COLD_TRIALS:-640}
SEEDS=${SEEDS:-1}; BASELINE=${BASELINE:-}; NUM_AGENTS=${NUM_AGENTS:-8}; DEVICE=${DEVICE:-0}
TIMING=${TIMING:-"--number 10 --repeat 3 --min-repeat-ms 2"}

# shellcheck source=bench/local_fleet.sh
source "$(dirname "$0")/local_fleet.sh"
# shellcheck source=bench/recorded_space.sh
source "$(dirname "$0")/recorded_space.sh"
recorded_space "$DB" "$OUT/recorded.db" || exit 2
"$BIN/tunefleet-agent" --list-devices >"$OUT/devices.txt" 2>&1
[ -n "${PLATFORM:-}" ] || PLATFORM=$(first_gpu_platform "$OUT/devices.txt")
start_local_fleet "$BIN" "$OUT" live "$NUM_AGENTS" "$PLATFORM" "$DEVICE"

# The history: the recorded file without TASK's own records. TASK's records go to recorded.tsv, one line per config
# that ran: "index cost" at the lower median of its passes, as simulate replays it; the reference is their best.
rm -f "$OUT"/warm-*.db "$OUT"/cold-*.db "$OUT/runs.tsv"
cp "$OUT/recorded.db" "$OUT/history.db"
REF=$(python3 - "$OUT/history.db" "$TASK" "$OUT/recorded.tsv" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
spec = (sys.argv[2], sys.argv[2] + ":float32")
rows = db.execute("SELECT r.config_index, r.mean_cost FROM records r JOIN tasks t ON t.id = r.task_id "
                  "WHERE t.spec IN (?, ?) AND r.status = 0 AND r.mean_cost > 0", spec).fetchall()
per = {}
for i, c in rows: per.setdefault(i, []).append(c)
recorded = {i: sorted(v)[(len(v) - 1) // 2] for i, v in per.items()}
with open(sys.argv[3], "w") as f:
    for i, c in recorded.items(): f.write(f"{i} {c!r}\n")
print(min(recorded.values()) if recorded else 0)
db.execute("DELETE FROM records WHERE task_id IN (SELECT id FROM tasks WHERE spec IN (?, ?))", spec)
db.commit()
PY
)
[ "$REF" != 0 ] || { echo "transfer_live: $DB has no successful record of $TASK" >&2; exit 2; }

run() {  # kind tuner trials seed: one tune, its two lines, and "kind seed trials live recorded" in runs.tsv
  local name=$1-$4 t0 rc
  rm -f "$OUT/$name.db"
  [ "$1" != warm ] || cp "$OUT/history.db" "$OUT/$name.db"
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$BIN/tunefleet" tune --rpc-tracker "$FLEET_ADDR" --rpc-key live --task "$TASK" --template "$TEMPLATE" \
    --tuner "$2" --trials "$3" --devices "$NUM_AGENTS" --batch 16 --seed "$4" $TIMING ${TUNE_ARGS:-} --db "$OUT/$name.db" \
    >"$OUT/tune-$name.log" 2>&1
  rc=$?
  echo "$name ($2): tune exit $rc in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
  grep -m1 "warm start from" "$OUT/tune-$name.log" | sed 's/^\[[^]]*\] \[info\] /  /'
  python3 - "$OUT/$name.db" "$TASK" "$REF" "$OUT/recorded.tsv" "$1 $4" "$OUT/runs.tsv" <<'PY'
import sqlite3, sys
spec = (sys.argv[2], sys.argv[2] + ":float32")
query = ("SELECT r.config_index, r.status, r.mean_cost FROM records r JOIN tasks t ON t.id = r.task_id "
         "WHERE t.spec IN (?, ?) ORDER BY r.id")
rows = sqlite3.connect(sys.argv[1]).execute(query, spec).fetchall()
ref = float(sys.argv[3])
live = next((i + 1 for i, (_, s, c) in enumerate(rows) if s == 0 and 0 < c <= ref / 0.95), None)
best = min((c for _, s, c in rows if s == 0 and c > 0), default=0)
print(f"  {len(rows)} trials, best {best * 1e6:.2f} us ({ref / best * 100 if best else 0:.0f}% of the recorded best "
      f"{ref * 1e6:.2f} us); within 95% of it " + (f"first at trial {live}" if live else "never"))
# The same run judged by what the configs it chose were recorded at (the lower median of their passes), as the
# replay judges a strategy: live timings drift by a few per cent from the recording, which moves a threshold at 95%.
recorded = {int(i): float(c) for i, c in (line.split() for line in open(sys.argv[4]))}
hit = next((k + 1 for k, (i, _, _) in enumerate(rows) if i in recorded and ref / recorded[i] >= 0.95), None)
print("  by the recorded results of the configs it chose: within 95% first at trial " + (str(hit) if hit else "never"))
with open(sys.argv[6], "a") as f:
    f.write(f"{sys.argv[5]} {len(rows)} {live or 0} {hit or 0}\n")
PY
}
for seed in $SEEDS; do
  run warm xgb "$WARM_TRIALS" "$seed"
  run cold xgb "$COLD_TRIALS" "$seed"
  [ -z "$BASELINE" ] || run "$BASELINE" "$BASELINE" "$COLD_TRIALS" "$seed"
done | tee "$OUT/transfer_live.txt"

# Medians over the seeds; a run that never came within 95% counts as one trial past its budget (">N").
python3 - "$OUT/runs.tsv" "$BASELINE" <<'PY' | tee -a "$OUT/transfer_live.txt"
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    kind, seed, trials, live, rec = line.split()
    runs.setdefault(kind, []).append((int(trials), int(live), int(rec)))
def median(kind, col):
    v = [r[col] if r[col] else r[0] + 1 for r in runs[kind]]
    never = sum(1 for r in runs[kind] if not r[col])
    return statistics.median(v), never
for col, what in ((2, "as recorded"), (1, "timed live")):
    parts = []
    m = {}
    for kind in runs:
        m[kind], never = median(kind, col)
        parts.append(f"{kind} {m[kind]:g}" + (f" ({never} never)" if never else ""))
    line = f"median trials to 95% over {len(runs['cold'])} seeds, {what}: " + ", ".join(parts)
    base = sys.argv[2]
    if base and base in m:
        line += f"; ratio {base}/xgb {m[base] / m['cold']:.2f}, {base}/xgb with history {m[base] / m['warm']:.2f}"
    print(line)
PY
