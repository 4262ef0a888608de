#!/usr/bin/env bash
# Every template on awkward shapes (primes, odd channels, strides, groups, batch, fp16) on one device, by random
# search: a tracker and one agent of key check (bench/local_fleet.sh), each task tuned with --tuner random, then the
# records counted by template and status. A config whose kernel leaves an output element unwritten, or computes it
# wrong, is a WRONG_ANSWER (status 5): outputs start as NaN. For a lent GPU (bench/device_bundle.sh's bundle, nothing
# installed) or this machine's PoCL. The logs, the tuning log and summary.txt go to OUT; summary.txt is printed.
#   usage: bench/gpu_templates_check.sh DIST_DIR OUT [PLATFORM_PATTERN]   (default pattern: nvidia, else platform 0)
#   TRIALS=N trials per task and template (default 32)
set -u
D=${1:?usage: bench/gpu_templates_check.sh DIST_DIR OUT [PLATFORM_PATTERN]}
OUT=${2:?usage: bench/gpu_templates_check.sh DIST_DIR OUT [PLATFORM_PATTERN]}
PATTERN=${3:-nvidia}; TRIALS=${TRIALS:-32}
S=$OUT/summary.txt
mkdir -p "$OUT"; : >"$S"

source "$(dirname "$0")/local_fleet.sh"  # start_local_fleet

"$D/tunefleet-agent" --list-devices >"$OUT/devices.txt" 2>&1
PLAT=$(grep -i "$PATTERN" "$OUT/devices.txt" | head -1 | grep -o -E '^platform [0-9]+' | grep -o -E '[0-9]+')
echo "platform ${PLAT:=0}" >>"$S"
start_local_fleet "$D" "$OUT" check 1 "$PLAT" 0  # stopped when the script exits

# "SPEC TEMPLATE": each template on the shapes it takes (a device without cl_khr_fp16 refuses the float16 ones, rc 2).
RUNS=(
  "gemm:257,129,65 gemm.buffer"
  "gemm:61,47,33,batch=3,transb=1,bias=1,act=relu gemm.buffer"
  "gemm:130,66,34:float16 gemm.buffer"
  "conv2d:1,13,17,17,11,3,3,1,1,bias=1,relu=1 conv2d_nchw.buffer"
  "conv2d:2,12,9,9,8,3,3,2,1,groups=4 conv2d_nchw.buffer"
  "conv2d:1,8,11,11,8,3,3,1,2,dilation=2 conv2d_nchw.buffer"
  "conv2d:1,16,16,16,16,3,3,1,1:float16 conv2d_nchw.buffer"
  "conv2d:1,13,17,17,11,3,3,1,1,bias=1,relu=1 conv2d_nchwc.image2d"
  "conv2d:1,12,9,9,20,3,3,2,1 conv2d_nchwc.image2d"
  "conv2d:1,13,17,17,11,3,3,1,1,bias=1,relu=1 conv2d_winograd"
  "conv2d:2,7,9,11,5,3,3,1,1,act=relu6 conv2d_winograd"
  "conv2d:1,16,15,15,24,1,1,1,0,bias=1,act=sigmoid conv2d_1x1.buffer"
  "conv2d:3,5,7,7,9,1,1,2,0 conv2d_1x1.buffer"
  "dwconv2d:1,16,15,15,3,3,2,1,bias=1 depthwise_conv2d_nchwc.image2d"
  "dwconv2d:2,12,13,13,5,5,1,2,dilation=2 depthwise_conv2d_nchwc.image2d"
  "pool:1,13,17,17,3,3,2,1 pool.worksize"
  "pool:2,7,9,9,2,2,2,0,mode=avg pool.worksize"
  "pool:1,5,7,9,1,1,1,0,global=1 pool.worksize"
  "elementwise:1,13,17,19,kind=add eltwise.worksize"
  "elementwise:2,5,7,3,kind=sigmoid eltwise.worksize"
)
for run in "${RUNS[@]}"; do
  read -r spec template <<<"$run"
  "$D/tunefleet" tune --rpc-tracker "$FLEET_ADDR" --rpc-key check --task "$spec" --template "$template" --tuner random \
    --trials "$TRIALS" --number 1 --repeat 1 --batch 16 --db "$OUT/templates.db" >>"$OUT/tune.out" 2>&1
  echo "$spec $template rc $?" >>"$S"
done

python3 - "$OUT/templates.db" >>"$S" 2>&1 <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print("template | records | ok | wrong_answer | other failures")
for name, n, ok, wrong in c.execute(
        "SELECT t.name, count(*), sum(r.status = 0), sum(r.status = 5) FROM records r "
        "JOIN templates t ON t.id = r.template_id GROUP BY t.name ORDER BY t.name"):
    print(f"{name} | {n} | {ok} | {wrong} | {n - ok - wrong}")
for spec, name, msg in c.execute(
        "SELECT k.spec, t.name, substr(r.message, 1, 160) FROM records r JOIN templates t ON t.id = r.template_id "
        "JOIN tasks k ON k.id = r.task_id WHERE r.status = 5 LIMIT 10"):
    print("wrong:", spec, name, msg)
for name, status, n, msg in c.execute(
        "SELECT t.name, r.status, count(*), substr(min(r.message), 1, 200) FROM records r "
        "JOIN templates t ON t.id = r.template_id WHERE r.status NOT IN (0, 5) GROUP BY t.name, r.status"):
    print(f"failed: {name} status {status} x{n}: {msg}")
PY

cat "$S"
