#!/usr/bin/env bash
# Records whole search spaces for `tunefleet simulate` (bench/data/): every valid config of each task, measured with
# `tunefleet tune --tuner grid --trials all`, one tuning log per template holding two sibling tasks (for replays
# with --transfer-from). Run it by hand on the machine with the device.
#   usage: bench/record_spaces.sh BIN_DIR OUT_DIR      (BIN_DIR holds tunefleet, tunefleet-tracker, tunefleet-agent:
#                                                      build/bin or a bundle made by bench/device_bundle.sh)
# Devices: with TRACKER=host:port the agents of KEY on that tracker measure (DEVICES of them, default NUM_AGENTS);
# without it the script starts its own tracker on 127.0.0.1:PORT and NUM_AGENTS agents on PLATFORM/DEVICE (the
# agents of one device share it through its device lock: they build in parallel, time one at a time), and stops
# them at the end. Re-running the same command resumes: what a log already holds is never measured again.
# PASSES=N (default 1) measures every config N times, each pass after the first a `tune --fresh` over the whole
# space (compiles come from the agents' caches by then); `simulate` replays a config at the lower median of its
# passes, so a space whose kernels run for microseconds on a noisy device gets a ground truth a rerun reproduces.
#   env: SPACES (lines "DB_NAME TEMPLATE TASK..."; default: the GPU sets below), SETS (names of the default sets to
#        record, in order: "nchwc dwconv winograd pointwise dwmobile"), TRACKER, KEY (gpu), NUM_AGENTS (4),
#        DEVICES, PLATFORM (the first GPU platform, else 0), DEVICE (0), PORT (9392), BATCH (4 x DEVICES, at least
#        16), TIMING ("--number 10 --repeat 3 --min-repeat-ms 2"), TIMEOUT (30 s a job), PASSES (1)
# Writes OUT_DIR/DB_NAME.db per set (bench/data/ keeps them as `xz -9` DB_NAME.db.xz), OUT_DIR/record-*.log per
# task and OUT_DIR/record.txt (counts, wall time, configs per second). Expected valid configs on an NVIDIA H200
# (tunefleet-space-count --device h200 TASK):
#   nchwc     conv2d:1,64,14,14,32,3,3,2,1 1200   conv2d:1,32,14,14,32,3,3,2,1 960
#   dwconv    dwconv2d:1,128,14,14,3,3,2,1 1056   dwconv2d:1,96,14,14,3,3,2,1 1344
#   winograd  conv2d:1,32,7,7,16,3,3,1,1   2800   conv2d:1,64,7,7,16,3,3,1,1   2800
#   pointwise conv2d:1,576,7,7,160,1,1,1,0 4950   conv2d:1,960,7,7,160,1,1,1,0 6600
#   dwmobile  dwconv2d:1,576,14,14,3,3,2,1 4416   dwconv2d:1,960,7,7,3,3,1,1   6528
set -uo pipefail
if [ $# -ne 2 ]; then sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
BIN=$1; OUT=$2; mkdir -p "$OUT"
KEY=${KEY:-gpu}; NUM_AGENTS=${NUM_AGENTS:-4}; DEVICES=${DEVICES:-$NUM_AGENTS}
DEVICE=${DEVICE:-0}; PORT=${PORT:-9392}; TIMEOUT=${TIMEOUT:-30}
BATCH=${BATCH:-$(( DEVICES * 4 > 16 ? DEVICES * 4 : 16 ))}
TIMING=${TIMING:-"--number 10 --repeat 3 --min-repeat-ms 2"}
SETS=${SETS:-"nchwc dwconv winograd pointwise dwmobile"}
PASSES=${PASSES:-1}
# Task shapes: 3x3 convolutions with 7x7 outputs (stride-2 layers on 14x14 inputs, as in ResNet/MobileNet stages),
# small enough that a whole space takes minutes; siblings differ in channels so that transfer has work to do.
# pointwise and dwmobile are layers of MobileNetV2 as they are (its two 1x1 projections to 160 channels at 7x7, and
# its last stride-2 and stride-1 depthwise layers): spaces of 4,400-6,600 configs.
declare -A SET=(
  [nchwc]="gpu_conv2d_nchwc_image2d conv2d_nchwc.image2d conv2d:1,64,14,14,32,3,3,2,1 conv2d:1,32,14,14,32,3,3,2,1"
  [dwconv]="gpu_dwconv2d_nchwc_image2d depthwise_conv2d_nchwc.image2d dwconv2d:1,128,14,14,3,3,2,1 dwconv2d:1,96,14,14,3,3,2,1"
  [winograd]="gpu_conv2d_winograd conv2d_winograd conv2d:1,32,7,7,16,3,3,1,1 conv2d:1,64,7,7,16,3,3,1,1"
  [pointwise]="gpu_pointwise_nchwc_image2d conv2d_nchwc.image2d conv2d:1,576,7,7,160,1,1,1,0 conv2d:1,960,7,7,160,1,1,1,0"
  [dwmobile]="gpu_dwmobile_nchwc_image2d depthwise_conv2d_nchwc.image2d dwconv2d:1,576,14,14,3,3,2,1 dwconv2d:1,960,7,7,3,3,1,1"
)
if [ -z "${SPACES:-}" ]; then
  SPACES=""
  for s in $SETS; do
    [ -n "${SET[$s]:-}" ] || { echo "record_spaces: unknown set '$s' (${!SET[*]})" >&2; exit 2; }
    SPACES+="${SET[$s]}"$'\n'
  done
fi

# shellcheck source=bench/local_fleet.sh
source "$(dirname "$0")/local_fleet.sh"
now() { date +%s.%N; }
if [ -n "${TRACKER:-}" ]; then
  ADDR=$TRACKER
else
  "$BIN/tunefleet-agent" --list-devices >"$OUT/devices.txt" 2>&1
  [ -n "${PLATFORM:-}" ] || PLATFORM=$(first_gpu_platform "$OUT/devices.txt")
  start_local_fleet "$BIN" "$OUT" "$KEY" "$NUM_AGENTS" "$PLATFORM" "$DEVICE" "$PORT"
  ADDR=$FLEET_ADDR
fi
for _ in $(seq 1 100); do
  [ "$("$BIN/tunefleet" query --json --rpc-tracker "$ADDR" 2>/dev/null | grep -o '"agent_id"' | wc -l)" -ge "$DEVICES" ] && break
  sleep 0.3
done
"$BIN/tunefleet" query --rpc-tracker "$ADDR" | tee "$OUT/query.txt"

# db task tmpl -> "recorded valid", from "replaying SPEC on TEMPLATE, device NAME [FP]: N recorded configs of M valid" on stdout, or
# from the refusal of a space less than half recorded ("the log records N of the M valid configs ...") on stderr.
counts() {
  [ -f "$OUT/$1.db" ] || return 0
  "$BIN/tunefleet" simulate --db "$OUT/$1.db" --task "$2" --template "$3" --tuner grid --baseline grid --seeds 1 \
    --target 1 2>&1 | sed -n -e 's/^replaying .*: \([0-9]*\) recorded configs of \([0-9]*\) valid.*/\1 \2/p' \
    -e 's/.*the log records \([0-9]*\) of the \([0-9]*\) valid configs.*/\1 \2/p' | head -n 1
}

records_of() {  # db task -> how many records (every pass, failures included) the task has
  python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("SELECT COUNT(*) FROM records r JOIN tasks t ON t.id = r.task_id WHERE t.spec IN (?, ?)",
                 (sys.argv[2], sys.argv[2] + ":float32")).fetchone()[0])' "$OUT/$1.db" "$2" 2>/dev/null || echo 0
}

rc=0
while read -r db tmpl tasks; do
  [ -n "$db" ] || continue
  for task in $tasks; do
    for pass in $(seq 1 "$PASSES"); do
      n0=$(records_of "$db" "$task")
      fresh=""
      if [ "$pass" -gt 1 ]; then
        # Pass p is done once the task holds p records per valid config (an interrupted pass is measured again).
        read -r have _ < <(counts "$db" "$task" "$tmpl")
        [ "$n0" -ge "$(( pass * ${have:-0} ))" ] && continue
        fresh="--fresh"
      fi
      t0=$(now)
      # shellcheck disable=SC2086
      "$BIN/tunefleet" tune --rpc-tracker "$ADDR" --rpc-key "$KEY" --task "$task" --template "$tmpl" --tuner grid \
        --trials all --devices "$DEVICES" --batch "$BATCH" --timeout "$TIMEOUT" $TIMING $fresh --db "$OUT/$db.db" \
        >"$OUT/record-$db-$task-pass$pass.log" 2>&1
      trc=$?
      secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
      read -r have want < <(counts "$db" "$task" "$tmpl")
      n=$(( $(records_of "$db" "$task") - n0 ))
      rate=$(awk -v n="$n" -v s="$secs" 'BEGIN { printf "%.2f", (s > 0 ? n / s : 0) }')
      msg="$db $task [$tmpl] pass $pass of $PASSES: ${have:-?} of ${want:-?} valid configs recorded; this run $n in $secs s = $rate configs/s (tune exit $trc)"
      if [ "$trc" != 0 ] || [ -z "${have:-}" ] || [ "${have:-0}" != "${want:-x}" ]; then msg+="  INCOMPLETE: run again to resume"; rc=1; fi
      echo "$msg" | tee -a "$OUT/record.txt"
    done
  done
done <<<"$SPACES"

# What each space offers a replay: failures, the best, and how many configs lie within 95% of it (a space where
# that share is large is found by random search in a few trials, so no strategy can show a ratio on it).
for f in "$OUT"/*.db; do
  python3 - "$f" <<'PY' 2>/dev/null | tee -a "$OUT/record.txt"
import sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
for spec, tmpl in db.execute("SELECT DISTINCT t.spec, p.name FROM records r JOIN tasks t ON t.id = r.task_id "
                             "JOIN templates p ON p.id = r.template_id"):
    rows = db.execute("SELECT r.config_index, r.status, r.mean_cost FROM records r JOIN tasks t ON t.id = r.task_id "
                      "JOIN templates p ON p.id = r.template_id WHERE t.spec = ? AND p.name = ?", (spec, tmpl)).fetchall()
    per_config = {}  # as simulate replays it: the lower median of a config's ok results
    for i, s, c in rows:
        per_config.setdefault(i, [])
        if s == 0 and c > 0: per_config[i].append(c)
    ok = sorted(sorted(v)[(len(v) - 1) // 2] for v in per_config.values() if v)
    if not ok:
        print(f"{sys.argv[1].rsplit('/', 1)[-1]} {spec}: {len(rows)} records, none ran")
        continue
    best = ok[0]
    within = sum(1 for c in ok if best / c >= 0.95)
    print(f"{sys.argv[1].rsplit('/', 1)[-1]} {spec}: {len(rows)} records of {len(per_config)} configs, "
          f"{len(per_config) - len(ok)} failed, best "
          f"{best * 1e6:.2f} us, median {statistics.median(ok) / best:.2f}x the best, {within} within 95% of it")
PY
done
exit $rc
