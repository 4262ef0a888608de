#!/usr/bin/env bash
# Checks the replay's transfer figures on a live device: tunes TASK with `tune --tuner xgb`, once with a recorded
# space's other task in its log (warm start) and once with an empty log, and prints for each run the trial at which
# a result first came within 95% of the best recorded for TASK in DB, timed live and as recorded (what the configs
# the run chose were recorded at, as the replay counts). Run it by hand on the machine with the device.
#   usage: bench/transfer_live.sh BIN_DIR OUT_DIR   (BIN_DIR: build/bin or a bundle made by bench/device_bundle.sh)
#   env: DB (bench/data/gpu_pointwise_nchwc_image2d.db, or its .xz), TEMPLATE (conv2d_nchwc.image2d),
#        TASK (conv2d:1,960,7,7,160,1,1,1,0), WARM_TRIALS (64), COLD_TRIALS (640), SEED (1), NUM_AGENTS (8),
#        PLATFORM (the first GPU platform, else 0), DEVICE (0), TIMING ("--number 10 --repeat 3 --min-repeat-ms 2")
set -uo pipefail
if [ $# -ne 2 ]; then sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
BIN=$1; OUT=$2; mkdir -p "$OUT"
DB=${DB:-bench/data/gpu_pointwise_nchwc_image2d.db}; TEMPLATE=${TEMPLATE:-conv2d_nchwc.image2d}
TASK=${TASK:-conv2d:1,960,7,7,160,1,1,1,0}; WARM_TRIALS=${WARM_TRIALS:-64}; COLD_TRIALS=${COLD_TRIALS:-640}
SEED=${SEED:-1}; NUM_AGENTS=${NUM_AGENTS:-8}; DEVICE=${DEVICE:-0}
TIMING=${TIMING:-"--number 10 --repeat 3 --min-repeat-ms 2"}

# shellcheck source=bench/local_fleet.sh
source "$(dirname "$0")/local_fleet.sh"
# shellcheck source=bench/recorded_space.sh
source "$(dirname "$0")/recorded_space.sh"
recorded_space "$DB" "$OUT/recorded.db" || exit 2
"$BIN/tunefleet-agent" --list-devices >"$OUT/devices.txt" 2>&1
[ -n "${PLATFORM:-}" ] || PLATFORM=$(first_gpu_platform "$OUT/devices.txt")
start_local_fleet "$BIN" "$OUT" live "$NUM_AGENTS" "$PLATFORM" "$DEVICE"

# The warm log: the recorded file without TASK's own records; the reference: TASK's best as simulate replays it.
rm -f "$OUT/warm.db" "$OUT/cold.db"
cp "$OUT/recorded.db" "$OUT/warm.db"
REF=$(python3 - "$OUT/warm.db" "$TASK" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
spec = (sys.argv[2], sys.argv[2] + ":float32")
rows = db.execute("SELECT r.config_index, r.mean_cost FROM records r JOIN tasks t ON t.id = r.task_id "
                  "WHERE t.spec IN (?, ?) AND r.status = 0 AND r.mean_cost > 0", spec).fetchall()
per = {}
for i, c in rows: per.setdefault(i, []).append(c)
print(min(sorted(v)[(len(v) - 1) // 2] for v in per.values()) if per else 0)
db.execute("DELETE FROM records WHERE task_id IN (SELECT id FROM tasks WHERE spec IN (?, ?))", spec)
db.commit()
PY
)
[ "$REF" != 0 ] || { echo "transfer_live: $DB has no successful record of $TASK" >&2; exit 2; }

run() {  # name trials
  local t0 rc
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$BIN/tunefleet" tune --rpc-tracker "$FLEET_ADDR" --rpc-key live --task "$TASK" --template "$TEMPLATE" \
    --tuner xgb --trials "$2" --devices "$NUM_AGENTS" --batch 16 --seed "$SEED" $TIMING --db "$OUT/$1.db" \
    >"$OUT/tune-$1.log" 2>&1
  rc=$?
  echo "$1: tune exit $rc in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
  grep -m1 "warm start from" "$OUT/tune-$1.log" | sed 's/^\[[^]]*\] \[info\] /  /'
  python3 - "$OUT/$1.db" "$TASK" "$REF" "$OUT/recorded.db" <<'PY'
import sqlite3, sys
spec = (sys.argv[2], sys.argv[2] + ":float32")
query = ("SELECT r.config_index, r.status, r.mean_cost FROM records r JOIN tasks t ON t.id = r.task_id "
         "WHERE t.spec IN (?, ?) ORDER BY r.id")
rows = sqlite3.connect(sys.argv[1]).execute(query, spec).fetchall()
ref = float(sys.argv[3])
hit = next((i + 1 for i, (_, s, c) in enumerate(rows) if s == 0 and 0 < c <= ref / 0.95), None)
best = min((c for _, s, c in rows if s == 0 and c > 0), default=0)
print(f"  {len(rows)} trials, best {best * 1e6:.2f} us ({ref / best * 100 if best else 0:.0f}% of the recorded best "
      f"{ref * 1e6:.2f} us); within 95% of it " + (f"first at trial {hit}" if hit else "never"))
# The same run judged by what the configs it chose were recorded at (the lower median of their passes), as the
# replay judges a strategy: live timings drift by a few per cent from the recording, which moves a threshold at 95%.
per = {}
for i, s, c in sqlite3.connect(sys.argv[4]).execute(query, spec):
    per.setdefault(i, [])
    if s == 0 and c > 0: per[i].append(c)
recorded = {i: sorted(v)[(len(v) - 1) // 2] for i, v in per.items() if v}
hit = next((k + 1 for k, (i, _, _) in enumerate(rows) if i in recorded and ref / recorded[i] >= 0.95), None)
print("  by the recorded results of the configs it chose: within 95% first at trial " + (str(hit) if hit else "never"))
PY
}
run warm "$WARM_TRIALS" | tee "$OUT/transfer_live.txt"
run cold "$COLD_TRIALS" | tee -a "$OUT/transfer_live.txt"
