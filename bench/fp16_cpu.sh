#!/usr/bin/env bash
# float16 (half arithmetic, cl_khr_fp16) on a CPU: Debian's PoCL has no cl_khr_fp16, Intel's CPU OpenCL runtime has
# it (on any x86-64 CPU, AMD included). This fetches that runtime from the Python package index (wheels only, no
# Python import: the wheels are unpacked as plain shared libraries), points the OpenCL ICD loader at it alone, and
#   1. runs every template's device tests there (the float16 ones skip on PoCL, here they run), then
#   2. tunes one task per convolution/GEMM template in float32, float16-acc32 and float16 through a tracker and an
#      agent on loopback, every result checked against the reference, and prints each best.
# Usage: bench/fp16_cpu.sh [BUILD_DIR] [OUT_DIR]   (env: BUDGET seconds per tune, default 20; CACHE wheel dir)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."  # BUILD_DIR and OUT_DIR are read from the repository root, as in the other scripts
BUILD=${1:-build}
OUT=${2:-$(mktemp -d)}
BUDGET=${BUDGET:-20}
CACHE=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tunefleet/intel-opencl-cpu}
BIN=$BUILD/bin
source "$here/require_binaries.sh"
require_binaries "$BIN" tunefleet tunefleet-tracker tunefleet-agent
mkdir -p "$OUT" "$CACHE"

# Pinned versions: the runtime and the compiler runtime it links against are released together.
wheels=(intel-opencl-rt==2026.2.0 intel-cmplr-lib-rt==2026.2.0 tbb==2023.2.0)
if [ ! -f "$CACHE/.unpacked" ]; then
  python3 -m pip download --quiet --no-deps --dest "$CACHE" "${wheels[@]}"
  for w in "$CACHE"/*.whl; do python3 -m zipfile -e "$w" "$CACHE/unpacked"; done
  touch "$CACHE/.unpacked"
fi
libdirs=$(find "$CACHE/unpacked" -type d -path '*data/lib' | tr '\n' ':')
icd=$(find "$CACHE/unpacked" -name libintelocl.so | head -n1)
[ -n "$icd" ] || { echo "fp16_cpu: libintelocl.so not found under $CACHE/unpacked" >&2; exit 1; }
export LD_LIBRARY_PATH=${libdirs}${LD_LIBRARY_PATH:-}
export OCL_ICD_FILENAMES=$icd  # the loader lists this runtime alone (no vendors directory): platform 0, device 0
export OCL_ICD_VENDORS=$OUT/no-vendors
mkdir -p "$OCL_ICD_VENDORS"
"$BIN/tunefleet-agent" --list-devices | tee "$OUT/devices.txt"
grep -q cl_khr_fp16 <(clinfo 2>/dev/null) || echo "fp16_cpu: warning: clinfo does not list cl_khr_fp16" >&2

echo "== 1. device tests (float16 included)"
fails=0
for t in "$BIN"/spaces_*_run_test; do
  if "$t" >"$OUT/$(basename "$t").log" 2>&1; then r=ok; else r=FAILED; fails=$((fails + 1)); fi
  printf '%-60s %s (%s)\n' "$(basename "$t")" "$r" \
    "$(grep -E '^\[  (PASSED|SKIPPED|FAILED)  \] [0-9]+ test' "$OUT/$(basename "$t").log" | tr '\n' ' ')"
done

echo "== 2. tuning float32 / float16-acc32 / float16 (${BUDGET} s each)"
# shellcheck source=bench/local_fleet.sh
. "$here/local_fleet.sh"
start_local_fleet "$BIN" "$OUT" intel-cpu 1 0 0
tasks=(gemm:256,256,256 conv2d:1,32,28,28,32,3,3,1,1 conv2d:1,64,28,28,128,1,1,2,0 dwconv2d:1,64,28,28,3,3,1,1)
for task in "${tasks[@]}"; do
  for p in float32 float16-acc32 float16; do
    "$BIN/tunefleet" tune --rpc-tracker "$FLEET_ADDR" --rpc-key intel-cpu --task "$task:$p" --db "$OUT/fp16.db" \
      --time-budget "$BUDGET" --batch 8 --number 3 --repeat 2 >"$OUT/tune-${task//[:,]/_}-$p.log" 2>&1 || {
      echo "fp16_cpu: tune $task:$p failed, see $OUT/tune-${task//[:,]/_}-$p.log" >&2
      fails=$((fails + 1))
    }
  done
done
"$BIN/tunefleet" best --db "$OUT/fp16.db" | tee "$OUT/best.txt"
python3 - "$OUT/fp16.db" <<'PY' | tee "$OUT/status.txt"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for spec, n, ok in db.execute("SELECT t.spec, count(*), sum(r.status = 0) FROM records r JOIN tasks t ON t.id = "
                              "r.task_id GROUP BY t.spec ORDER BY t.spec"):
    print(f"{spec}: {n} records, {ok} OK (checked against the reference), {n - ok} other")
PY
echo "outputs in $OUT"
exit $((fails > 0))
