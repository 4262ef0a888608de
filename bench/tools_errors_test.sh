#!/usr/bin/env bash
# bench/tools_errors_test.sh BIN_DIR: the bench tools (tunefleet-space-count, tunefleet-model-speed,
# tunefleet-job-overhead; sources in bench/) refuse bad input in one error line naming the option or value, exit 2,
# and take a failed write to standard output (> /dev/full) for a failure, exit 1 in one line, not exit 0.
# The job-overhead cases that open a device need an OpenCL device (PoCL here); the others need none.
# Exit: 0 pass; 1 a check failed; 77 a tool is not built (-DTUNEFLEET_BUILD_BENCHMARKS=OFF).
set -uo pipefail

: "${1:?usage: tools_errors_test.sh BIN_DIR}"  # here, not inside $(...), where it would end only the subshell
bin="$(cd "$1" && pwd)" || exit 2
for t in tunefleet-space-count tunefleet-model-speed tunefleet-job-overhead; do
  [ -x "${bin}/${t}" ] || { echo "SKIP: ${bin}/${t} is not built"; exit 77; }
done
failures=0

# Expect RC TEXT TOOL ARGS...: the tool, its stdout sent to /dev/null (or /dev/full with TOOL prefixed "full:"),
# exits RC and writes exactly one line to stderr, which holds TEXT.
Expect() {
  local rc="$1" text="$2" tool="$3" out=/dev/null err got lines
  shift 3
  if [ "${tool#full:}" != "${tool}" ]; then tool="${tool#full:}"; out=/dev/full; fi
  err="$("${bin}/${tool}" "$@" 2>&1 >"${out}")"
  got=$?
  lines="$(printf '%s' "${err}" | grep -c '')"
  if [ "${got}" -eq "${rc}" ] && [ "${lines}" -eq 1 ] && [[ "${err}" == *"${text}"* ]]; then
    echo "PASS: ${tool} $* -> ${rc}"
  else
    echo "FAIL: ${tool} $* (stdout ${out}): rc ${got} (want ${rc}), ${lines} line(s), want '${text}':"
    echo "${err}"
    failures=$((failures + 1))
  fi
}

sc=tunefleet-space-count
Expect 1 "$sc: error: standard output: write failed" "full:$sc" gemm:8,8,8
Expect 2 "no template can run conv2d:1,3,4,4,16,9,9,1,0:float32 on NVIDIA H200 (conv2d_nchw.buffer:" \
  $sc conv2d:1,3,4,4,16,9,9,1,0
Expect 2 "the window does not fit the padded input" $sc pool:1,32,16,16,17,17,1,0
Expect 2 "gemm.buffer: device has no cl_khr_fp16" $sc --device h200 gemm:8,8,8:float16
Expect 2 "template gemm.buffer cannot run conv2d:1,3,32,32,16,3,3,1,1:float32 on NVIDIA H200" \
  $sc --template gemm.buffer conv2d:1,3,32,32,16,3,3,1,1
Expect 2 "a gemm operand has 2^31 elements or more" $sc gemm:1000000,1000000,1000
Expect 2 "$sc: error: unknown option '--bogus'" $sc --bogus gemm:8,8,8
Expect 2 "$sc: error: --device: 1 required" $sc gemm:8,8,8 --device
Expect 2 "$sc: error: --template: 1 required" $sc gemm:8,8,8 --template
Expect 2 "--device is given 2 times" $sc --device h200 --device pocl gemm:8,8,8
Expect 2 "--template is given 2 times" $sc --template A --template B gemm:8,8,8
Expect 2 "$sc: error: gemm:0,1,1: M=0 is out of range" $sc gemm:0,1,1
if [ "$("${bin}/$sc" --device=pocl gemm:8,8,8 | awk '{print $2}')" = gemm.buffer ]; then
  echo "PASS: $sc --device=pocl"
else
  echo "FAIL: $sc --device=pocl printed no count"; failures=$((failures + 1))
fi

ms=tunefleet-model-speed
small=(--task gemm:64,64,64 --template gemm.buffer --results 8 --plan 4 --repeat 1 --ensemble 1)
Expect 1 "$ms: error: standard output: write failed" "full:$ms" "${small[@]}"
Expect 2 "$ms: error: --ensemble: expected a number between 1 and 64" $ms --ensemble 100000
Expect 2 "$ms: error: --task: bogus: expected op:params" $ms --task bogus
Expect 2 "$ms: error: --task: gemm:0,1,1: M=0 is out of range" $ms --task gemm:0,1,1
Expect 2 "$ms: error: --template: unknown template 'bogus'" $ms --template bogus
Expect 2 "$ms: error: --template: template conv2d_winograd cannot run gemm:8,8,8:float32" \
  $ms --task gemm:8,8,8 --template conv2d_winograd

jo=tunefleet-job-overhead
Expect 2 "$jo: error: --task: bogus: expected op:params" $jo --task bogus
Expect 2 "$jo: error: --task: gemm:0,1,1: M=0 is out of range" $jo --task gemm:0,1,1
Expect 2 "$jo: error: --template: unknown template 'bogus'" $jo --template bogus
Expect 2 "$jo: error: --template: template conv2d_winograd cannot run gemm:8,8,8:float32 on any device" \
  $jo --task gemm:8,8,8 --template conv2d_winograd
# With an OpenCL device (PoCL in CI; its first platform has one device).
if "${bin}/$jo" --task gemm:8,8,8 --jobs 1 >/dev/null 2>&1; then
  Expect 1 "$jo: error: standard output: write failed" "full:$jo" --task gemm:8,8,8 --jobs 1
  Expect 2 "$jo: error: --platform 99 is out of range" $jo --task gemm:8,8,8 --platform 99
  Expect 2 "$jo: error: --device 99 is out of range" $jo --task gemm:8,8,8 --device 99
  single="$("${bin}/$jo" --task gemm:8,8,8 --jobs 1 2>&1 | tail -n 1)"
  if [ "${single}" = "no median: there is no job after the first (give --jobs 2 or more)" ]; then
    echo "PASS: $jo --jobs 1 says there is no median"
  else
    echo "FAIL: $jo --jobs 1 ends with '${single}'"; failures=$((failures + 1))
  fi
else
  echo "NOTE: $jo cannot run a job here (no OpenCL device?): its device cases were not checked"
fi

[ "${failures}" -eq 0 ] || { echo "${failures} check(s) failed"; exit 1; }
echo "all checks passed"
