#!/usr/bin/env bash
# Times `tunefleet import` of an AutoTVM log made from the shipped recorded spaces (bench/data/*.db.xz, exported
# with `tunefleet export --format autotvm`): into a fresh log, then the same file again (every line already present).
# Checks that the imported log exports the same lines as the source logs. Then imports, into fresh logs, one config
# measured again and again: the file's first line repeated N times, each with its own timestamp (REPEATS, default
# "2000 4000 8000 16000"), which shows whether the check for a record already present grows with the config's records.
# Last, imports TASKS (default "250 1000") new tasks of one line each into a copy of a log that holds BASE (default
# 128000) records of another task, which shows whether reading a task's records grows with the whole log.
#   usage: bench/import_speed.sh [BUILD_DIR]   (prints lines, seconds and peak memory of each import)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build}/bin
source bench/require_binaries.sh
require_binaries "$BIN" tunefleet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for f in bench/data/*.db.xz; do
  name=$(basename "$f" .db.xz)
  xz -dc "$f" > "$work/$name.db"
  # A template that mirrors no TVM knobs (conv2d_winograd) has nothing to export: left out.
  "$BIN/tunefleet" export --db "$work/$name.db" --format autotvm -o "$work/$name.log" 2>/dev/null ||
    echo "$name: no AutoTVM records (left out)"
done
cat "$work"/*.log > "$work/all.log"
echo "lines: $(wc -l < "$work/all.log")"
for pass in fresh again; do
  /usr/bin/time -f "import ($pass): %e s, peak %M KB" "$BIN/tunefleet" import "$work/all.log" --db "$work/imported.db" \
    2>&1 | grep -E "^import|records added"
done
"$BIN/tunefleet" export --db "$work/imported.db" --format autotvm -o "$work/again.log" 2>/dev/null
cmp -s <(sort "$work/all.log") <(sort "$work/again.log") && echo "export of the imported log: the same lines" ||
  echo "export of the imported log: DIFFERENT lines"
for n in ${REPEATS:-2000 4000 8000 16000}; do
  python3 - "$work/all.log" "$n" > "$work/repeats.log" <<'PY'
import json, sys
line = json.loads(open(sys.argv[1]).readline())
for i in range(int(sys.argv[2])):
    line["result"][3] = 1.7e9 + i * 0.25
    print(json.dumps(line))
PY
  rm -f "$work/repeats.db"
  /usr/bin/time -f "import ($n lines of one config): %e s, peak %M KB" "$BIN/tunefleet" import "$work/repeats.log" \
    --db "$work/repeats.db" 2>&1 | grep -E "^import"
done
# conv2d_nchwc.image2d lines of conv2d:1,C,7,7,4,3,3,1,1 at one config, made up: every split's inner factors 1 (a
# config outside the space's limits, which import keeps).
make_lines() {  # FIRST_C TASKS LINES_PER_TASK
  python3 - "$@" <<'PY'
import json, sys
first, tasks, per = map(int, sys.argv[1:])
target = ("opencl -keys=opencl,gpu -max_num_threads=4096 -model=bench -texture_spatial_limit=1048576 "
          "-thread_warp_size=1")
entity = [["tile_fc", "sp", [-1, 1, 1]], ["tile_y", "sp", [-1, 1, 1]], ["tile_x", "sp", [-1, 1, 1]],
          ["tile_rcc", "sp", [-1, 1]], ["tile_ry", "sp", [-1, 1]], ["tile_rx", "sp", [-1, 1]],
          ["auto_unroll_max_step", "ot", 0], ["unroll_explicit", "ot", 0]]
for t in range(tasks):
    c = first + 4 * t
    args = [["TENSOR", [1, c, 7, 7], "float32"], ["TENSOR", [4, c, 3, 3], "float32"], [1, 1], [1, 1, 1, 1],
            [1, 1], "float32"]
    for i in range(per):
        print(json.dumps({"input": [target, "conv2d_nchwc.image2d", args, {}],
                          "config": {"index": 0, "code_hash": None, "entity": entity},
                          "result": [[1e-4, 1.01e-4], 0, 0.3, 1.7e9 + i * 0.25], "version": 0.2,
                          "tvm_version": "0.8.0"}))
PY
}
make_lines 4000 1 "${BASE:-128000}" > "$work/base.log"
rm -f "$work/base.db"
/usr/bin/time -f "import (base: ${BASE:-128000} lines of one task): %e s, peak %M KB" "$BIN/tunefleet" import \
  "$work/base.log" --db "$work/base.db" 2>&1 | grep -E "^import"
for n in ${TASKS:-250 1000}; do
  make_lines 4 "$n" 1 > "$work/tasks.log"
  cp "$work/base.db" "$work/tasks.db"
  /usr/bin/time -f "import ($n new tasks into the base log): %e s, peak %M KB" "$BIN/tunefleet" import \
    "$work/tasks.log" --db "$work/tasks.db" 2>&1 | grep -E "^import"
done
