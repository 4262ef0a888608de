#!/usr/bin/env bash
# Compares two builds of the tuner on a run over many tasks, live: for each seed of SEEDS, the same `tune` (MODEL, or
# the task specs of TASKS) with BIN_A and with BIN_B, both at the same time, each with a tracker and NUM_AGENTS agents
# of its own on the one device (its device lock gives every timing the device alone, so the two runs see the same
# machine at the same time). It is the check for a change that acts across a run's tasks, such as what a task
# learns from the tasks tuned before it, which a replay of one task cannot show. Prints, per seed and side:
#   - the estimated model latency (Σ count × best latency, best template per task) after a quarter, half,
#     three quarters and all of the run's trials ("-" while a task has no success yet);
#   - when TRIALS cannot give every task/template unit a first batch (the runs' logs say so), the same with each
#     task the run did not tune counted at its templates' fallback configs, measured once after both sides by a
#     third run of BIN_B (`--batch 1`, one trial per unit: its fallback config, into OUT/fallback.db); a task whose
#     only records are a build's fallback round counts at that same measurement, so both sides count an untuned
#     task alike;
#   - the geometric mean over units (a task under one template) of the best of the unit's first batch as a share of
#     the best any run of either side found for that unit, over every unit and over those that are not the first of
#     their template in the run (only those can learn from other tasks of the run).
# Then the medians over seeds and in how many seeds B was better. A seed cut short on either side (the device tool's
# time limit) is compared at the trials both sides reached, and says so. Run it by hand on the machine with the
# device; SUMMARY_ONLY=1 prints the summary again from OUT (e.g. the logs a cut-short command brought back).
#   usage: bench/model_ab_live.sh BIN_A BIN_B OUT_DIR   (BIN_*: build/bin or a bundle made by bench/device_bundle.sh)
#   env: MODEL (models/tiny_mobilenet.onnx) or TASKS (task specs, space-separated; used instead of MODEL when set),
#        TRIALS (320), SEEDS (1 2 3 4), TEMPLATE (none: every template that fits), NUM_AGENTS (1), PLATFORM (the first
#        GPU platform, else 0), DEVICE (0), BATCH (16), TIMING ("--number 3 --repeat 3 --min-repeat-ms 2"),
#        TUNE_ARGS (more tune options for both sides), A_ARGS and B_ARGS (for one side each: with the same build on
#        both sides, e.g. B_ARGS="--tuner random", it compares two settings)
set -uo pipefail
if [ $# -ne 3 ]; then sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
BIN_A=$1; BIN_B=$2; OUT=$3; mkdir -p "$OUT"
MODEL=${MODEL:-models/tiny_mobilenet.onnx}; TASKS=${TASKS:-}; TRIALS=${TRIALS:-320}; SEEDS=${SEEDS:-1 2 3 4}
NUM_AGENTS=${NUM_AGENTS:-1}; DEVICE=${DEVICE:-0}; BATCH=${BATCH:-16}
TIMING=${TIMING:-"--number 3 --repeat 3 --min-repeat-ms 2"}

what=()
if [ -n "$TASKS" ]; then
  for t in $TASKS; do what+=(--task "$t"); done
else
  what+=("$MODEL")
fi
[ -z "${TEMPLATE:-}" ] || what+=(--template "$TEMPLATE")
if [ -z "${SUMMARY_ONLY:-}" ]; then
# A summary or a seed's log of an earlier command in OUT must not pass for this one's when this one is cut short.
for seed in $SEEDS; do
  rm -f "$OUT"/[ab]/seed-"$seed".db "$OUT"/[ab]/seed-"$seed".log "$OUT"/[ab]/seed-"$seed".rc
done
rm -f "$OUT/model_ab_live.txt" "$OUT/fallback.db"
"$BIN_A/tunefleet-agent" --list-devices >"$OUT/devices.txt" 2>&1
# shellcheck source=bench/local_fleet.sh
source "$(dirname "$0")/local_fleet.sh"
[ -n "${PLATFORM:-}" ] || PLATFORM=$(first_gpu_platform "$OUT/devices.txt")

# One side's runs, seed after seed, on a fleet of its own (a subshell, so each side stops its own fleet).
side() {
  local name=$1 bin=$2 args=$3
  mkdir -p "$OUT/$name"
  start_local_fleet "$bin" "$OUT/$name" "ab-$name" "$NUM_AGENTS" "$PLATFORM" "$DEVICE"
  local seed
  for seed in $SEEDS; do
    rm -f "$OUT/$name/seed-$seed.db"
    # shellcheck disable=SC2086
    "$bin/tunefleet" tune "${what[@]}" --rpc-tracker "$FLEET_ADDR" --rpc-key "ab-$name" --trials "$TRIALS" \
      --batch "$BATCH" --seed "$seed" --db "$OUT/$name/seed-$seed.db" $TIMING ${TUNE_ARGS:-} $args \
      >"$OUT/$name/seed-$seed.log" 2>&1
    local rc=$?
    echo "$rc" >"$OUT/$name/seed-$seed.rc"  # a run cut short with the script leaves none
    [ "$rc" -eq 0 ] || echo "model_ab_live: side $name seed $seed failed (see its log)" >&2
  done
}
(side a "$BIN_A" "${A_ARGS:-}") &
(side b "$BIN_B" "${B_ARGS:-}") &
wait

# A budget short of every unit's first batch leaves tasks untuned: measure every unit's fallback config once, so that
# the latency can count an untuned task as an application would run it.
units=$(grep -ho 'trials for [0-9]* task/template units' "$OUT"/[ab]/seed-*.log 2>/dev/null | head -1 | awk '{print $3}')
if [ -n "$units" ]; then
  (
    mkdir -p "$OUT/fallback"
    start_local_fleet "$BIN_B" "$OUT/fallback" ab-fallback "$NUM_AGENTS" "$PLATFORM" "$DEVICE"
    rm -f "$OUT/fallback.db"
    # shellcheck disable=SC2086
    "$BIN_B/tunefleet" tune "${what[@]}" --rpc-tracker "$FLEET_ADDR" --rpc-key ab-fallback --trials "$units" \
      --batch 1 --db "$OUT/fallback.db" $TIMING ${TUNE_ARGS:-} >"$OUT/fallback/tune.log" 2>&1 ||
      echo "model_ab_live: the fallback run failed (see $OUT/fallback/tune.log)" >&2
  )
fi
fi  # SUMMARY_ONLY

python3 - "$OUT" "$TRIALS" "$BATCH" "$SEEDS" <<'PY' | tee "$OUT/model_ab_live.txt"
import json, math, os, sqlite3, statistics, sys
out, trials, batch, seeds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split()

def load(path):
    db = sqlite3.connect(path)
    counts = {tid: json.loads(w).get("count", 1) for tid, w in db.execute("SELECT id, workload FROM tasks")}
    rows = db.execute("SELECT task_id, template_id, status, mean_cost FROM records ORDER BY id").fetchall()
    return counts, rows

def spec_ids(path):
    return {spec: tid for tid, spec in sqlite3.connect(path).execute("SELECT id, spec FROM tasks")}

# Fallback latency per task spec (the fastest of its templates' fallback configs), when OUT/fallback.db exists.
fallback = {}
if os.path.exists(os.path.join(out, "fallback.db")):
    db = sqlite3.connect(os.path.join(out, "fallback.db"))
    for spec, status, cost in db.execute(
            "SELECT t.spec, r.status, r.mean_cost FROM records r JOIN tasks t ON t.id = r.task_id"):
        if status == 0 and cost > 0 and (spec not in fallback or cost < fallback[spec]):
            fallback[spec] = cost

def round_length(rows):
    """How many of the first records are a fallback round (one record for each unit of the run before any batch;
    since the round came in, `tune` measures every unit's fallback config first): 0 when the run had none."""
    seen = set()
    for task, tmpl, *_ in rows:
        if (task, tmpl) in seen:
            break
        seen.add((task, tmpl))
    return len(seen) if len(seen) > 1 and len(seen) == len({(t, m) for t, m, *_ in rows}) else 0

def latency(counts, rows, k, fallback_of=None):
    # With fallback_of, a task the run did not tune (no record, or only its fallback round's) counts at fallback_of,
    # the same single measurement on both sides, so that a second measurement of an untuned fallback is no advantage.
    skip = round_length(rows) if fallback_of else 0
    tuned = {task for task, *_ in rows[skip:k]}
    best = {}
    for i, (task, _, status, cost) in enumerate(rows[:k]):
        if i < skip and task not in tuned:
            continue
        if status == 0 and cost > 0 and (task not in best or cost < best[task]):
            best[task] = cost
    if fallback_of:
        for t in counts:
            f = fallback_of.get(t)
            if f and (t not in best or f < best[t]):
                best[t] = f
    if any(t not in best for t in counts):
        return None
    return sum(counts[t] * best[t] for t in counts)

def units(rows):
    """(task, template) -> [(status, cost)] in record order, and the units in the order they started, without the
    records of a fallback round: the units' batches."""
    per, order = {}, []
    for task, tmpl, status, cost in rows[round_length(rows):]:
        if (task, tmpl) not in per:
            per[(task, tmpl)] = []
            order.append((task, tmpl))
        per[(task, tmpl)].append((status, cost))
    return per, order

def best_of(results):
    ok = [c for s, c in results if s == 0 and c > 0]
    return min(ok) if ok else None

runs = {}
for side in ("a", "b"):
    for seed in seeds:
        path = os.path.join(out, side, f"seed-{seed}.db")
        if os.path.exists(path):
            runs[(side, seed)] = load(path)
pooled = {}  # unit -> best over every run of both sides (task ids agree: each run creates its tasks in one order)
for counts, rows in runs.values():
    per, _ = units(rows)
    for u, results in per.items():
        b = best_of(results)
        if b is not None and (u not in pooled or b < pooled[u]):
            pooled[u] = b

def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")

def finished(side, seed):
    """The run ended by itself (its budget, every space measured, early stopping), not cut short with the script."""
    path = os.path.join(out, side, f"seed-{seed}.rc")
    return os.path.exists(path) and open(path).read().strip() == "0"

checkpoints = [trials // 4, trials // 2, 3 * trials // 4, trials]
summary = {"a": [], "b": []}
fallback_ofs = {}
for (side, seed), (counts, rows) in sorted(runs.items(), key=lambda kv: (int(kv[0][1]), kv[0][0])):
    per, order = units(rows)
    seen_templates, first_all, first_later = set(), [], []
    for u in order:
        b = best_of(per[u][:batch])
        share = pooled[u] / b if b else 1e-3  # a first batch without a success counts as 0.1%
        first_all.append(share)
        if u[1] in seen_templates:
            first_later.append(share)
        seen_templates.add(u[1])
    reached = trials if finished(side, seed) else len(rows)  # "-" past the trials a cut-short run reached
    lat = [latency(counts, rows, k) if k <= reached else None for k in checkpoints]
    cells = " ".join("-" if x is None else f"{x * 1e3:.3f}" for x in lat)
    print(f"seed {seed} {side}: {len(rows)} records; latency (ms) at {'/'.join(map(str, checkpoints))} trials: "
          f"{cells}; first batch vs pooled best: all units {geomean(first_all):.3f}, "
          f"later units of a template {geomean(first_later):.3f} ({len(first_later)})")
    lat_fb = [None]
    fallback_of = None
    if fallback:
        ids = spec_ids(os.path.join(out, side, f"seed-{seed}.db"))
        fallback_of = {ids[spec]: cost for spec, cost in fallback.items() if spec in ids}
        lat_fb = [latency(counts, rows, k, fallback_of) if k <= reached else None for k in checkpoints]
        cells = " ".join("-" if x is None else f"{x * 1e3:.3f}" for x in lat_fb)
        tried = len({task for task, *_ in rows[round_length(rows):]})
        print(f"seed {seed} {side}: {tried} of {len(counts)} tasks tried; latency (ms) with untried tasks at their "
              f"fallback: {cells}")
    summary[side].append((seed, lat[-1], geomean(first_all), geomean(first_later), lat_fb[-1]))
    fallback_ofs[(side, seed)] = fallback_of if fallback else None

both = sorted(set(s for s, *_ in summary["a"]) & set(s for s, *_ in summary["b"]), key=int)
if not both:
    sys.exit("model_ab_live: no seed finished on both sides")
a = {s: rest for s, *rest in summary["a"]}
b = {s: rest for s, *rest in summary["b"]}
# A seed cut short on either side: both sides' latencies at the trials both reached (a run that ended early by
# itself, every space measured or early stopping, counts as reaching the budget).
for s in both:
    k = min(trials if finished(side, s) else len(runs[(side, s)][1]) for side in ("a", "b"))
    if k < trials:
        print(f"seed {s}: cut short, compared at {k} trials")
        for side, d in (("a", a), ("b", b)):
            counts, rows = runs[(side, s)]
            d[s][0] = latency(counts, rows, k)
            if fallback_ofs.get((side, s)):
                d[s][3] = latency(counts, rows, k, fallback_ofs[(side, s)])
for col, what, lower in ((0, "final latency (ms)", True), (1, "first batch, all units", False),
                         (2, "first batch, later units of a template", False),
                         (3, "final latency with untried tasks at their fallback (ms)", True)):
    xa = [a[s][col] for s in both if a[s][col] is not None]
    xb = [b[s][col] for s in both if b[s][col] is not None]
    if not xa or not xb:
        continue
    better = sum(1 for s in both if a[s][col] is not None and b[s][col] is not None
                 and (b[s][col] < a[s][col] if lower else b[s][col] > a[s][col]))
    scale = 1e3 if col in (0, 3) else 1
    print(f"{what}, {len(both)} seeds: A median {statistics.median(xa) * scale:.3f}, "
          f"B median {statistics.median(xb) * scale:.3f}; B better in {better}")
PY
