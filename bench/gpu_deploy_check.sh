#!/usr/bin/env bash
# What leaves a GPU run's logs, checked on the GPU (bench/device_bundle.sh's bundle; run after bench/gpu_head_check.sh,
# whose gemm.db and model.db it reads): the AutoTVM targets of the model's best records (each names the device's
# -model), the GEMM's kernel pack run by tunefleet_runtime_example on the NVIDIA platform (exit 0, its error against
# the CPU), and the same pack with its store macro made to write NaN (refused as edited, exit 2, while it carries the
# export's fingerprints; without them run and found wrong, exit 1, said as NaN). Lines go to OUT/summary.txt.
#   usage: bench/gpu_deploy_check.sh DIST_DIR HEAD_OUT OUT   (after: bash bench/gpu_head_check.sh dist $O/head)
set -u
D=${1:?usage: bench/gpu_deploy_check.sh DIST_DIR HEAD_OUT OUT}; H=${2:?usage: HEAD_OUT}; OUT=${3:?usage: OUT}
source "$(dirname "$0")/require_binaries.sh"
require_binaries "$D" tunefleet tunefleet-agent tunefleet_runtime_example
S=$OUT/summary.txt
mkdir -p "$OUT"

"$D/tunefleet-agent" --list-devices >"$OUT/devices.txt" 2>&1
PLAT=$(grep -i nvidia "$OUT/devices.txt" | head -1 | grep -o -E '^platform [0-9]+' | grep -o -E '[0-9]+')
echo "platform ${PLAT:=0}" >>"$S"

"$D/tunefleet" export --db "$H/model.db" --format autotvm --best-only -o "$OUT/model.tvm.log" >>"$S" 2>&1
echo "autotvm export rc $?; targets:" >>"$S"
python3 - "$OUT/model.tvm.log" >>"$S" 2>&1 <<'PY'
import collections, json, sys
targets = collections.Counter(json.loads(line)["input"][0] for line in open(sys.argv[1]) if line.strip())
for target, n in targets.items():
    print(f"  {n} records: {target}")
PY

"$D/tunefleet" export --db "$H/gemm.db" --format kernel-pack -o "$OUT/pack.json" >>"$S" 2>&1
echo "kernel-pack export rc $?" >>"$S"
W=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["kernels"][0]["task"])' "$OUT/pack.json")
"$D/tunefleet_runtime_example" "$OUT/pack.json" "$W" "$PLAT" >"$OUT/example.out" 2>&1
echo "runtime example ($W) rc $?: $(tail -1 "$OUT/example.out")" >>"$S"

python3 - "$OUT/pack.json" "$OUT/nan-fp.json" "$OUT/nan.json" >>"$S" 2>&1 <<'PY'
import json, sys
pack = json.load(open(sys.argv[1]))
store = "= (v))\n"
for kernel in pack["kernels"]:
    for launch in kernel["program"]["launches"]:
        source = launch["source"]
        at = source.find("#define ST_C(")
        end = source.find(store, at)
        if at < 0 or end < 0:
            sys.exit("no ST_C store macro in " + launch["entry"])
        launch["source"] = source[:end] + "= (v) * NAN)\n" + source[end + len(store):]
json.dump(pack, open(sys.argv[2], "w"))  # fingerprints kept: refused as edited
for kernel in pack["kernels"]:
    kernel.pop("program_fnv", None)
    kernel.pop("entry_fnv", None)
json.dump(pack, open(sys.argv[3], "w"))  # without them: run, and found wrong
PY
"$D/tunefleet_runtime_example" "$OUT/nan-fp.json" "$W" "$PLAT" >"$OUT/nan-fp.out" 2>&1
echo "runtime example, NaN-writing kernel with the export's fingerprint, rc $?: $(tail -1 "$OUT/nan-fp.out")" >>"$S"
"$D/tunefleet_runtime_example" "$OUT/nan.json" "$W" "$PLAT" >"$OUT/nan.out" 2>&1
echo "runtime example, NaN-writing kernel, rc $?: $(tail -1 "$OUT/nan.out")" >>"$S"
cat "$S"
