#!/usr/bin/env bash
# deploy/cross-aarch64.sh [SRC_DIR [BUILD_DIR]]: aarch64 portability proof for the agent.
#
# Cross-builds tunefleet-agent for 64-bit ARM Linux with Debian's cross toolchain and the :arm64 multiarch -dev
# packages, bundles it with deploy/bundle (closure from the arm64 library folders), and runs
# `tunefleet-agent --version` under qemu-aarch64 with the bundle's lib/ and the arm64 C library. qemu's -L / also
# lets the loader fall back to the host's other arm64 libraries: this proves the agent builds and starts for
# aarch64, not that the bundle alone holds every library it needs (deploy/bundle's closure check does that).
#
# Host setup, once (root; see deploy/README.md for what it changes on the host):
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install --no-install-recommends g++-aarch64-linux-gnu qemu-user \
#     libgrpc++-dev:arm64 libprotobuf-dev:arm64 libspdlog-dev:arm64 ocl-icd-opencl-dev:arm64
# The tuner's libraries have no co-installable arm64 package (libxgboost-dev is not Multi-Arch: same;
# libonnxifi:arm64 collides with libonnxifi:amd64 on /usr/lib/libonnxifi.so), and the agent links neither, so
# this script configures the agent alone (-DTUNEFLEET_AGENT_ONLY=ON), which asks for none of them.
#
# Defaults: SRC_DIR = the repository holding this script; BUILD_DIR = SRC_DIR/build-aarch64.
# Exit: 0 the aarch64 agent ran under qemu; 1 a step failed; 77 the host lacks the cross setup (skipped).
set -euo pipefail

for arg in "$@"; do
  case "$arg" in
    -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "cross-aarch64.sh: error: unknown option '$arg' (see deploy/cross-aarch64.sh --help)" >&2; exit 2 ;;
  esac
done
if (($# > 2)); then echo "cross-aarch64.sh: error: expected at most SRC_DIR and BUILD_DIR" >&2; exit 2; fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "${1:-${here}/..}" && pwd)"
build="${2:-${src}/build-aarch64}"
readonly kArmLibs="/usr/lib/aarch64-linux-gnu:/lib/aarch64-linux-gnu"
# The arm64 C library of the multiarch libc6:arm64 package (a dependency of the :arm64 -dev packages), found
# through the host root. Not /usr/aarch64-linux-gnu: with the cross toolchain's older libc6-arm64-cross
# (2.36-8cross1) the agent's gRPC init spins forever under qemu; with libc6:arm64 it runs.
readonly kQemuPrefix="/"

Step() { echo "== $*"; }
Skip() { echo "SKIP: $* (see the host setup at the top of deploy/cross-aarch64.sh)"; exit 77; }
Fail() { echo "FAIL: $*" >&2; exit 1; }

Step "checking the host's cross setup"
command -v aarch64-linux-gnu-g++ >/dev/null || Skip "aarch64-linux-gnu-g++ not installed (g++-aarch64-linux-gnu)"
command -v qemu-aarch64 >/dev/null || Skip "qemu-aarch64 not installed (qemu-user)"
[[ -f /usr/lib/aarch64-linux-gnu/cmake/grpc/gRPCConfig.cmake ]] || Skip "no arm64 gRPC (libgrpc++-dev:arm64)"
[[ -f /usr/lib/aarch64-linux-gnu/libprotobuf.so ]] || Skip "no arm64 protobuf (libprotobuf-dev:arm64)"
[[ -f /usr/lib/aarch64-linux-gnu/cmake/spdlog/spdlogConfig.cmake ]] || Skip "no arm64 spdlog (libspdlog-dev:arm64)"
[[ -f /usr/lib/aarch64-linux-gnu/libOpenCL.so ]] || Skip "no arm64 OpenCL loader (ocl-icd-opencl-dev:arm64, deploy/runtime)"
[[ -e /lib/ld-linux-aarch64.so.1 ]] || Skip "no arm64 C library in /lib (libc6:arm64)"

Step "configuring ${build} for aarch64"
cmake -S "${src}" -B "${build}" \
  -DCMAKE_TOOLCHAIN_FILE="${here}/cross/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTUNEFLEET_AGENT_ONLY=ON -DTUNEFLEET_BUILD_TESTS=OFF -DTUNEFLEET_BUILD_BENCHMARKS=OFF \
  >"${build}.configure.log" 2>&1 ||
  { tail -n 30 "${build}.configure.log"; Fail "cmake configure (log: ${build}.configure.log)"; }

Step "building tunefleet-agent for aarch64"
cmake --build "${build}" -j"${JOBS:-2}" --target tunefleet-agent || Fail "cross build of tunefleet-agent"
agent="${build}/bin/tunefleet-agent"
machine="$(readelf -h "${agent}" | sed -n 's/.*Machine:[[:space:]]*//p')"
echo "ELF machine: ${machine}"
[[ "${machine}" == *AArch64* ]] || Fail "${agent} is not an AArch64 binary (${machine})"

Step "bundling it (closure from the arm64 library folders)"
bundle="${build}/bundle"
rm -rf "${bundle}"
"${here}/bundle" "${build}" "${bundle}" --search-path "${kArmLibs}" --tar

Step "running the bundled agent under qemu-aarch64 with an empty environment"
# The wrapper would exec an aarch64 binary, which needs binfmt_misc; run the loader through qemu explicitly and
# give it what the wrapper would on a host without the bundle's C++ runtime: the bundle's lib/ and lib/runtime/
# first. -L supplies only the arm64 C library core.
out="$(env -i qemu-aarch64 -L "${kQemuPrefix}" -E LD_LIBRARY_PATH="${bundle}/lib:${bundle}/lib/runtime" \
  "${bundle}/bin/tunefleet-agent" --version 2>&1)" || Fail "tunefleet-agent --version under qemu: ${out}"
echo "${out}"
[[ "${out}" == *tunefleet* ]] || Fail "unexpected --version output: ${out}"
echo "PASS: the aarch64 agent bundle runs under qemu-aarch64 (${bundle}.tar.gz)"
