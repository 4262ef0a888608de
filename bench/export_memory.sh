#!/usr/bin/env bash
# Peak memory and time of `tunefleet export` (csv and autotvm) of a large log: a shipped recorded space
# (bench/data/gpu_pointwise_nchwc_image2d.db.xz, 34,650 records) with its records copied 2^DOUBLINGS times (default
# 5: about 1.1 million records). Prints rows, seconds and peak memory of each export.
#   usage: bench/export_memory.sh [BUILD_DIR] [DOUBLINGS]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build}/bin
source bench/require_binaries.sh
require_binaries "$BIN" tunefleet
DOUBLINGS=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
xz -dc bench/data/gpu_pointwise_nchwc_image2d.db.xz > "$work/big.db"
cols="session_id, task_id, template_id, device_id, config_index, config, status, costs, mean_cost, compile_time,
      wall_time, message, timestamp"
for _ in $(seq "$DOUBLINGS"); do
  python3 - "$work/big.db" "$cols" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute(f"INSERT INTO records ({sys.argv[2]}) SELECT {sys.argv[2]} FROM records")
db.commit()
PY
done
echo "records: $(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM records').fetchone()[0])" "$work/big.db")"
for format in csv autotvm; do
  /usr/bin/time -f "export --format $format: %e s, peak %M KB" "$BIN/tunefleet" export --db "$work/big.db" \
    --format "$format" -o "$work/out.$format" 2>&1 | grep -E "^export|written"
done
