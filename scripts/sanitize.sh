#!/usr/bin/env bash
# Builds tunefleet with sanitizers and runs the tests there (every binary the tests start, the tracker, agents and
# their workers among them, is the sanitized one). Run by hand: slower than scripts/test.sh, not part of CI.
#   SANITIZE=address (default): AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/; any report fails its
#     test (UBSan does not recover, ASan aborts).
#   SANITIZE=thread: ThreadSanitizer in build-tsan/, the tests whose threads share the project's state (tracker,
#     agent session, device lock, tuner progress). gRPC and protobuf are Debian's builds, without ThreadSanitizer, so
#     their own locks are invisible to it and every test over gRPC gets hundreds of reports inside gRPC; the reports
#     are written to build-tsan/tsan/ and scripts/tsan_ours.py lists (and fails on) those with an access in the
#     project's own code.
#   usage: scripts/sanitize.sh [ARGS...]   address: CTest arguments, e.g. -R 'agent_|cost_model'; thread: arguments
#          for each test binary, e.g. --gtest_filter='*Lease*' (none: all tests but tracker_service_test's MidJob)
#   env: SANITIZE (address | thread), BUILD_DIR (build-asan | build-tsan), JOBS (nproc), LEAKS (0: leak reports
#        are off, the OpenCL driver's allocations that live until exit would drown the project's; 1 to see them)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SANITIZE=${SANITIZE:-address}
case $SANITIZE in
  address) FLAGS=address,undefined; BUILD_DIR=${BUILD_DIR:-build-asan} ;;
  thread) FLAGS=thread; BUILD_DIR=${BUILD_DIR:-build-tsan} ;;
  *) echo "sanitize.sh: SANITIZE=$SANITIZE is not address or thread" >&2; exit 2 ;;
esac
JOBS=${JOBS:-$(nproc)}
bash scripts/install-deps.sh
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNEFLEET_SANITIZE=$FLAGS \
  -DTUNEFLEET_BUILD_BENCHMARKS=OFF >/dev/null
THREAD_TESTS=(lease_table_test agent_registry_test job_dispatcher_test tracker_state_test tracker_service_test
  client_test http_status_test agent_session_test agent_device_lock_test progress_test run_session_test)
if [ "$SANITIZE" = thread ]; then
  cmake --build "$BUILD_DIR" -j "$JOBS" --target "${THREAD_TESTS[@]}"
else
  cmake --build "$BUILD_DIR" -j "$JOBS"
fi
cd "$BUILD_DIR"
if [ -z "${POCL_CACHE_DIR:-}" ]; then
  POCL_CACHE_DIR=$(mktemp -d)
  trap 'rm -rf "$POCL_CACHE_DIR"' EXIT
fi
export POCL_CACHE_DIR
if [ "$SANITIZE" = thread ]; then
  rm -rf tsan && mkdir tsan
  export TSAN_OPTIONS="exitcode=0 report_signal_unsafe=0 log_path=$PWD/tsan/report"
  # Without arguments, the two MidJob tests of tracker_service_test are left out: their 48 MiB job crosses gRPC,
  # whose locks ThreadSanitizer does not see, so it checks every word of it against the other threads' writes and
  # reports them one by one (over 18 minutes; with intercept_send=0, 4 s to 500 s a test, over their deadlines).
  [ $# -gt 0 ] || set -- --gtest_filter='-*MidJob'
  status=0
  for t in "${THREAD_TESTS[@]}"; do
    echo "== $t"
    "bin/$t" "$@" >"tsan/$t.out" 2>&1 || { status=1; tail -20 "tsan/$t.out"; }
  done
  shopt -s nullglob
  logs=(tsan/report.*)
  if [ ${#logs[@]} -gt 0 ]; then python3 "$ROOT/scripts/tsan_ours.py" "$ROOT" "${logs[@]}" || status=1; fi
  exit $status
fi
export ASAN_OPTIONS="detect_leaks=${LEAKS:-0}:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=66"  # not a tool's own exit 1, which tests expect
# deploy_bundle runs the bundled agent under `env -i` (a host's bare environment), which drops ASAN_OPTIONS: the
# OpenCL driver's allocations that live until exit are then reported as leaks. It is left out here.
ctest --output-on-failure --timeout 1800 -j 2 -E '^deploy_bundle$' "$@"
