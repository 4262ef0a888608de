#!/usr/bin/env bash
# Builds tunefleet with AddressSanitizer and UndefinedBehaviorSanitizer into build-asan/ and runs the tests there
# (every binary the tests start, the tracker, agents and their workers among them, is the sanitized one). Any report
# fails its test: UBSan does not recover, ASan aborts. Run by hand (slower than scripts/test.sh, not part of CI).
#   usage: scripts/sanitize.sh [CTEST ARGS...]   e.g. scripts/sanitize.sh -R 'agent_|cost_model'
#   env: BUILD_DIR (build-asan), JOBS (nproc), LEAKS (0: leak reports are off, the OpenCL driver's and gRPC's own
#        allocations that live until exit would drown the project's; 1 to see them)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-asan}
JOBS=${JOBS:-$(nproc)}
bash scripts/install-deps.sh
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNEFLEET_SANITIZE=address,undefined \
  -DTUNEFLEET_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"
cd "$BUILD_DIR"
if [ -z "${POCL_CACHE_DIR:-}" ]; then
  POCL_CACHE_DIR=$(mktemp -d)
  trap 'rm -rf "$POCL_CACHE_DIR"' EXIT
fi
export POCL_CACHE_DIR
export ASAN_OPTIONS="detect_leaks=${LEAKS:-0}:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# deploy_bundle runs the bundled agent under `env -i` (a host's bare environment), which drops ASAN_OPTIONS: the
# OpenCL driver's allocations that live until exit are then reported as leaks. It is left out here.
ctest --output-on-failure --timeout 1800 -j 2 -E '^deploy_bundle$' "$@"
