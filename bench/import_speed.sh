#!/usr/bin/env bash
# Times `tunefleet import` of an AutoTVM log made from the shipped recorded spaces (bench/data/*.db.xz, exported
# with `tunefleet export --format autotvm`): into a fresh log, then the same file again (every line already present).
# Checks that the imported log exports the same lines as the source logs. Then imports, into fresh logs, one config
# measured again and again: the file's first line repeated N times, each with its own timestamp (REPEATS, default
# "2000 4000 8000 16000"), which shows whether the check for a record already present grows with the config's records.
#   usage: bench/import_speed.sh [BUILD_DIR]   (prints lines, seconds and peak memory of each import)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build}/bin
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
